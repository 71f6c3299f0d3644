"""The paper's Table 1 for any model shape: ms per decoded token and per verify pass.

Models are built from their configs with random weights (timing does not
depend on the values), so nothing is downloaded: the shapes below are copied
from the published config.json files, or the user passes a local config.
RoPE scaling variants are left out; they do not change the cost of a pass.

`runner` says how each pass is run: "transformers" (the model's own forward
with a DynamicCache, as the paper's Table 1 was measured) or one of the
engine's runners (eager, static, graphs; engine/runners). A decode step has
to read every weight and the cached keys and values at least once, so its
bytes over its time is the bandwidth it reaches; `copy_bandwidth` measures
what the device can copy, and the row gives its share.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ...errors import InvalidParameter
from ...engine.runners.hf_compat import cache_kw

if TYPE_CHECKING:   # torch and transformers load when a row is measured, not when bench imports this
    import torch
    from transformers import PretrainedConfig, PreTrainedModel

_LLAMA = dict(model_type="llama", hidden_act="silu", attention_bias=False, mlp_bias=False)
_QWEN2 = dict(model_type="qwen2", hidden_act="silu")

SHAPES: dict[str, dict[str, Any]] = {
    # double7/vicuna-68m, vicuna-160m (llama-68m / llama-160m shapes)
    "vicuna-68m": {**_LLAMA, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 2,
                   "num_attention_heads": 12, "num_key_value_heads": 12, "vocab_size": 32000,
                   "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "tie_word_embeddings": False},
    "vicuna-160m": {**_LLAMA, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                    "num_attention_heads": 12, "num_key_value_heads": 12, "vocab_size": 32000,
                    "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "tie_word_embeddings": False},
    "Qwen2.5-0.5B": {**_QWEN2, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                     "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
                     "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "tie_word_embeddings": True},
    "Llama-3.2-1B": {**_LLAMA, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
                     "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                     "tie_word_embeddings": True},
    "vicuna-7b": {**_LLAMA, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                  "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
                  "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False},
    "Qwen2.5-7B": {**_QWEN2, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
                   "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
                   "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                   "tie_word_embeddings": False},
    "Llama-3.1-8B": {**_LLAMA, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
                     "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                     "tie_word_embeddings": False},
    "vicuna-13b": {**_LLAMA, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
                   "num_attention_heads": 40, "num_key_value_heads": 40, "vocab_size": 32000,
                   "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False},
    "Llama-3.1-70B": {**_LLAMA, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
                      "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256,
                      "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                      "tie_word_embeddings": False},
}

# The paper's Table 1 (H100; the 70B in int4), ms per token, for side-by-side printing.
PAPER_TABLE1 = {"Llama-3.2-1B": 8.87, "Llama-3.1-8B": 16.65, "Llama-3.1-70B": 925.05, "vicuna-68m": 1.76,
                "vicuna-160m": 5.61, "vicuna-7b": 14.29, "vicuna-13b": 20.15}

CPU_DEFAULT_MAX_PARAMS = 1.5e9  # above this, CPU runs only when asked for by name


def param_count(shape: dict[str, Any]) -> int:
    """Parameters of a Llama/Qwen2-style decoder from its config numbers."""
    h = int(shape["hidden_size"])
    inter = int(shape["intermediate_size"])
    layers = int(shape["num_hidden_layers"])
    heads = int(shape["num_attention_heads"])
    kv = int(shape.get("num_key_value_heads") or heads)
    hd = int(shape.get("head_dim") or h // heads)
    v = int(shape["vocab_size"])
    attn = h * heads * hd + 2 * h * kv * hd + heads * hd * h
    if shape.get("model_type") == "qwen2":
        attn += heads * hd + 2 * kv * hd  # q/k/v biases
    per_layer = attn + 3 * h * inter + 2 * h
    emb = v * h * (1 if shape.get("tie_word_embeddings") else 2)
    return emb + layers * per_layer + h


def load_shape(name_or_path: str) -> tuple[str, dict[str, Any]]:
    """A built-in shape by name (case-insensitive) or a local config.json (file or directory)."""
    for name, shape in SHAPES.items():
        if name.lower() == name_or_path.lower():
            return name, dict(shape)
    p = Path(name_or_path)
    if p.is_dir():
        p = p / "config.json"
    if p.suffix == ".json" or p.exists():
        try:
            cfg = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidParameter(f"no config file {str(p)!r}") from None
        except (OSError, ValueError) as exc:
            raise InvalidParameter(f"{p}: not a readable config.json ({exc})") from None
        if not isinstance(cfg, dict) or "model_type" not in cfg:
            raise InvalidParameter(f"{p}: a model config.json with a 'model_type' is needed")
        missing = [k for k in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                               "vocab_size") if k not in cfg]
        if missing:
            raise InvalidParameter(f"{p}: config lacks {', '.join(missing)}")
        return p.parent.name or p.stem, cfg
    raise InvalidParameter(f"unknown shape {name_or_path!r}; built in: {', '.join(SHAPES)} (or a path to a config.json)")


@dataclass
class LatencyRow:
    name: str
    params: int
    device: str
    dtype: str
    context: int
    decode_ms: float = float("nan")
    verify_ms: dict[int, float] = field(default_factory=dict)
    skipped: str = ""
    runner: str = "transformers"
    step_bytes: int = 0  # weights + K/V at `context`: what one decode step reads at least
    decode_gbs: float = float("nan")  # step_bytes / decode time
    copy_gbs: float = float("nan")  # the device's measured copy bandwidth (read + write), if given
    bandwidth_pct: float = float("nan")  # decode_gbs as a share of copy_gbs
    kernel: str = ""  # the matmul path the row ran (engine/common/kernel_path.py): packed or not, per model

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["verify_ms"] = {str(k): v for k, v in self.verify_ms.items()}
        return d


def _available_bytes(device: str) -> int:
    import torch

    if device.startswith("cuda"):
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    from ...engine.common.devices import cpu_available_bytes

    return cpu_available_bytes() or 8 * 1024**3


def plan(names: list[str], device: str, dtype_bytes: int, explicit: bool) -> list[tuple[str, dict, str]]:
    """(name, shape, reason-to-skip or "") for each shape, judged by memory and, on CPU, size."""
    avail = _available_bytes(device)
    out = []
    for n in names:
        name, shape = load_shape(n)
        need = param_count(shape) * dtype_bytes
        why = ""
        if need > 0.7 * avail:
            why = f"needs ~{need / 2**30:.1f} GiB of weights, {avail / 2**30:.1f} GiB free on {device}"
        elif device == "cpu" and not explicit and param_count(shape) > CPU_DEFAULT_MAX_PARAMS:
            why = f"{param_count(shape) / 1e9:.1f}B parameters is slow on CPU; ask for it with --shape {name}"
        out.append((name, shape, why))
    return out


def _median_time(fn: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


RUNNERS = ("transformers", "eager", "static", "graphs")


def build_model(shape: dict[str, Any], device: str, dtype: str, seed: int = 0) -> PreTrainedModel:
    """A random-weight model of `shape` on `device` (nothing downloaded)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg_kwargs = {k: v for k, v in shape.items() if k not in ("model_type", "architectures", "torch_dtype",
                                                                "dtype", "transformers_version", "_name_or_path",
                                                                "auto_map", "quantization_config")}
    config = AutoConfig.for_model(shape["model_type"], **cfg_kwargs)
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    return model.eval()


def step_bytes(model: PreTrainedModel, context: int) -> int:
    """Bytes a decode step reads at least: every weight once, and the K/V of `context` tokens."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    cfg = model.config
    heads = int(cfg.num_attention_heads)
    kv = int(getattr(cfg, "num_key_value_heads", None) or heads)
    hd = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
    elt = next(model.parameters()).element_size()
    return int(weights + 2 * int(cfg.num_hidden_layers) * kv * hd * context * elt)


def copy_bandwidth(device: str, mib: int = 512, repeats: int = 10) -> float:
    """GB/s the device copies one buffer into another (read + write counted, as CUDA's bandwidthTest does)."""
    import torch

    n = mib * 2**20
    src = torch.empty(n, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    sync = (lambda: torch.cuda.synchronize(device)) if device.startswith("cuda") else (lambda: None)
    dst.copy_(src)
    t = _median_time(lambda: dst.copy_(src), repeats, sync)
    return 2 * n / t / 1e9


def _timers(model: PreTrainedModel, runner: str, ids: torch.Tensor, context: int,
            config: PretrainedConfig) -> Callable[[int], Callable[[], None]]:
    """run(k) -> a call that forwards k tokens after `context` and rewinds them."""
    from transformers import DynamicCache

    if runner == "transformers":
        cache = DynamicCache(config=config)
        model(input_ids=ids[:, :context], **cache_kw(model, cache), use_cache=True)

        def run(k: int) -> Callable[[], None]:
            def f() -> None:
                model(input_ids=ids[:, context:context + k], **cache_kw(model, cache), use_cache=True)
                cache.crop(-k)
            return f
        return run
    from ...engine.runners import build_runner, choose_kind

    engine_runner = build_runner(choose_kind(runner, model, ids.device), model)
    engine_runner.start(context + int(ids.shape[1]))
    engine_runner.prefill(ids[:, :context])

    def run_engine(k: int) -> Callable[[], None]:
        def f() -> None:
            engine_runner.forward(ids[:, context:context + k], k)
            engine_runner.rewind(context)
        return f
    return run_engine


def measure(name: str, shape: dict[str, Any], device: str = "cpu", dtype: str = "float32", context: int = 128,
            ks: tuple[int, ...] = (1, 2, 4, 8, 16), repeats: int = 5, seed: int = 0, runner: str = "transformers",
            copy_gbs: float | None = None) -> LatencyRow:
    """Build the model with random weights on `device`, then time cached forward passes at `context`.

    `runner`: "transformers" or an engine runner (eager, static, graphs); one the model or device
    cannot use raises EngineUnavailable. With `copy_gbs` (from copy_bandwidth) the row also gives
    the share of it the decode step reaches.
    """
    import torch

    from ...engine.common.kernel_path import kernel_path
    from ...engine.common.packed_linear import pack_for_verify

    if runner not in RUNNERS:
        raise InvalidParameter(f"unknown runner {runner!r}; expected one of {', '.join(RUNNERS)}")
    row = LatencyRow(name, param_count(shape), device, dtype, context, runner=runner)
    model = build_model(shape, device, dtype, seed)
    if runner != "transformers":   # gammatune's runners run what load_pair loads: a float32 CPU target packed
        pack_for_verify(model, torch.device(device), model.dtype)   # where that pays (packed_linear.py)
    row.kernel = kernel_path(dtype, device, model)
    sync = (lambda: torch.cuda.synchronize(device)) if device.startswith("cuda") else (lambda: None)
    vocab = int(shape["vocab_size"])
    try:
        with torch.no_grad():
            ids = torch.randint(0, vocab, (1, context + max(ks) + 1), device=device)
            run = _timers(model, runner, ids, context, model.config)
            for k in ks:  # warm-up: allocator, kernels, graph capture
                run(k)()
            row.decode_ms = _median_time(run(1), repeats * 2, sync) * 1000
            for k in ks:
                row.verify_ms[k] = _median_time(run(k), repeats, sync) * 1000
        row.step_bytes = step_bytes(model, context)
        row.decode_gbs = row.step_bytes / (row.decode_ms / 1000) / 1e9
        if copy_gbs:
            row.copy_gbs = copy_gbs
            row.bandwidth_pct = 100 * row.decode_gbs / copy_gbs
    finally:
        del model
        gc.collect()
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return row
