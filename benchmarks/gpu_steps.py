"""The step timings of benchmarks/gpu_engine.py: plain decoding, one window at a capacity, the SDPA backend.

Kept apart from the script's report so each file stays one job; see gpu_engine.py for what is printed.
"""

from __future__ import annotations

import os
import statistics
import time

import torch

from gammatune_tui.engine.runners.hf_compat import cache_kw


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def decode_ms(model, runner: str, ids: torch.Tensor, context: int, n: int) -> float:
    """ms per plain decoded token (argmax fed back on the device; one sync at the end)."""
    from gammatune_tui.engine.runners import build_runner, choose_kind

    device = ids.device
    with torch.inference_mode():
        if runner == "transformers":
            from transformers import DynamicCache

            cache = DynamicCache(config=model.config)
            model(input_ids=ids[:, :context], **cache_kw(model, cache), use_cache=True)
            step = lambda x: model(input_ids=x, **cache_kw(model, cache), use_cache=True).logits[0, -1:]  # noqa: E731
            rewind = lambda: cache.crop(context - cache.get_seq_length()) if cache.get_seq_length() > context else None  # noqa: E731
        else:
            r = build_runner(choose_kind(runner, model, device), model)
            r.start(context + n + 8)
            r.prefill(ids[:, :context])
            step = lambda x: r.forward(x, 1)  # noqa: E731
            rewind = lambda: r.rewind(context)  # noqa: E731
        for reps in (4, n):  # warm-up (and graph capture), then the timed run
            rewind()
            x = ids[:, context:context + 1]
            sync(device)
            t0 = time.perf_counter()
            for _ in range(reps):
                x = step(x).argmax(-1).view(1, 1)
            sync(device)
        return (time.perf_counter() - t0) / n * 1000


def step_ms(model, runner: str, ids: torch.Tensor, capacity: int, q: int, repeats: int,
            compiled: bool = False) -> tuple[float, str]:
    """ms per q-token step with the cache filled to capacity − q, and the attention path it used."""
    from gammatune_tui.engine.runners import build_runner, choose_kind

    device = ids.device
    context = capacity - q
    os.environ["GAMMATUNE_COMPILE"] = "1" if compiled else "0"
    with torch.inference_mode():
        if runner == "transformers":
            from transformers import DynamicCache

            cache = DynamicCache(config=model.config)
            model(input_ids=ids[:, :context], **cache_kw(model, cache), use_cache=True)
            fwd = lambda x: model(input_ids=x, **cache_kw(model, cache), use_cache=True).logits  # noqa: E731
            rewind = lambda: cache.crop(context - cache.get_seq_length()) if cache.get_seq_length() > context else None  # noqa: E731
            path = "transformers sdpa"
        else:
            r = build_runner(choose_kind(runner, model, device), model)
            r.start(capacity, q - 1)  # a graphs runner captures the windows 1 … q here
            r.prefill(ids[:, :context])
            fwd = lambda x: r.forward(x, q)  # noqa: E731
            rewind = lambda: r.rewind(context)  # noqa: E731
            path = r._fixed.attention if getattr(r, "_fixed", None) is not None else "transformers layers"
        x = ids[:, context:context + q]
        times = []
        for _ in range(repeats + 2):
            sync(device)
            t0 = time.perf_counter()
            fwd(x)
            sync(device)
            times.append(time.perf_counter() - t0)
            rewind()
    return statistics.median(times[2:]) * 1000, path


def sdpa_backend(model, device: torch.device, capacity: int, q: int) -> str:
    """The SDPA kernel the fixed step's call (GQA, boolean mask) gets: the first backend, in torch's order, that runs."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cfg = model.config
    hd = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
    dt = next(model.parameters()).dtype
    qq = torch.randn(1, cfg.num_attention_heads, q, hd, device=device, dtype=dt)
    kk = torch.randn(1, cfg.num_key_value_heads, capacity, hd, device=device, dtype=dt)
    mask = torch.ones(1, 1, q, capacity, dtype=torch.bool, device=device)
    for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
        try:
            with sdpa_kernel([b]):
                torch.nn.functional.scaled_dot_product_attention(qq, kk, kk, attn_mask=mask, enable_gqa=True)
            return b.name.lower()
        except RuntimeError:
            continue
    return "none"
