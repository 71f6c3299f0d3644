"""`gammatune_generate`: gammatune's decoding as a transformers `custom_generate` callable, and `generate`.

`target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, gamma_method="gammatune+", ...)`
lets transformers do what it always does (resolve the GenerationConfig, build
the logits processors and stopping criteria) and hands the prepared arguments
here, where the engine's `SpeculativeDecoder` decodes them. `generate(target,
ids, ...)` is the same without going through `model.generate` by hand.

What transformers lets through (5.17 to 5.24, read off their
`_extract_generation_mode_kwargs`): keyword arguments named in this function's
signature and not taken by `_sample`. So the policy's parameters are named
here, generically (every field of PolicyParams, `settings.POLICY_KWARGS`);
`streamer=` and `tokenizer=` are dropped before the call. The streamer given
to `generate` is found in `generate`'s own frame (it has already been shown
the prompt there); `token_streamer=` is the name that always arrives.
`stop_strings=` is taken here (transformers cannot build them without the
tokenizer it drops) and matched with the model's tokenizer.
"""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import torch

from ..errors import InvalidParameter
from ..engine.common.pair import ModelPair
from ..engine.decoder import SpeculativeDecoder
from ..engine.events import Event, StepEvent
from ..engine.policies import PolicySettings
from .pairs import model_tokenizer, pair_for
from .settings import POLICY_KWARGS, Plan, plan, policy_settings, refuse_unsupported

if TYPE_CHECKING:   # what `generate` hands over; transformers loads with the user's models
    from transformers import (GenerationConfig, GenerationMixin, LogitsProcessorList, PreTrainedModel,
                              PreTrainedTokenizerBase, StoppingCriteriaList)
    from transformers.generation.streamers import BaseStreamer
    from transformers.generation.utils import GenerateDecoderOnlyOutput


def _frame_streamer() -> Any:
    """The `streamer` given to `model.generate` (which does not pass it on to a callable), or None."""
    frame = sys._getframe(2)   # gammatune_generate's caller: transformers' generate, when it called us
    if frame.f_code.co_name == "generate" and "custom_generate" in frame.f_locals:
        return frame.f_locals.get("streamer")
    return None


def check_arguments(input_ids: object = None, *, seed: object = None, on_event: object = None, streamer: object = None,
                    streamer_name: str = "streamer") -> None:
    """Arguments of the wrong type, named before any work (they used to fail deep inside the decoder)."""
    from ..engine.common.sampling_config import SEED_MAX

    if input_ids is not None:
        if not isinstance(input_ids, torch.Tensor):
            raise InvalidParameter(f"input_ids must be a torch tensor of token ids, shape (1, n) (e.g. "
                                   f"tokenizer(text, return_tensors='pt').input_ids), got {type(input_ids).__name__}")
        if input_ids.dtype.is_floating_point or input_ids.dtype.is_complex or input_ids.dtype == torch.bool:
            raise InvalidParameter(f"input_ids must hold integer token ids, got dtype {input_ids.dtype}")
        if input_ids.dim() != 2 or input_ids.shape[1] < 1:   # a batch of several is refused with its own words
            raise InvalidParameter(f"input_ids must have shape (1, n) with n >= 1, got {tuple(input_ids.shape)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX):
        raise InvalidParameter(f"seed must be a whole number from 0 to 2^63 - 1 (or None), got {seed!r}")
    if on_event is not None and not callable(on_event):
        raise InvalidParameter(f"on_event must be a function taking one event, got {type(on_event).__name__}")
    if streamer is not None and not (callable(getattr(streamer, "put", None))
                                     and callable(getattr(streamer, "end", None))):
        raise InvalidParameter(f"{streamer_name} must be a transformers streamer (with put() and end()), "
                               f"got {type(streamer).__name__}")


def _seed(seed: int | None) -> int:
    """The sampler's seed: the one given, else drawn from torch's global RNG (so torch.manual_seed reproduces)."""
    if seed is not None:
        return int(seed)
    return int(torch.randint(0, 2 ** 62, (1,)).item())


def gammatune_generate(model: PreTrainedModel, input_ids: torch.Tensor,
                       logits_processor: LogitsProcessorList | None = None,
                       stopping_criteria: StoppingCriteriaList | None = None,
                       generation_config: GenerationConfig | None = None, *,
                       draft_model: PreTrainedModel | str | None = None, gamma_method: str = "gammatune+",
                       on_event: Callable[[Event], None] | None = None, token_streamer: BaseStreamer | None = None,
                       text_tokenizer: PreTrainedTokenizerBase | None = None,
                       stop_strings: str | Sequence[str] | None = None, seed: int | None = None,
                       engine: str = "auto", ngram_min: int | None = None, ngram_max: int | None = None,
                       **kwargs: Any) -> torch.Tensor | GenerateDecoderOnlyOutput:
    """Decode one sequence with gammatune's speculative decoding; returns what `generate` returns.

    Called by `model.generate(..., custom_generate=gammatune_generate)`.
    `draft_model`: a draft model sharing the target's tokenizer, "prompt-lookup",
    or a self-draft ("self:int4"). `gamma_method` and the policy's parameters
    (gamma0, eta, delta, tau, gamma_min, gamma_max, each method's own) pick
    the γ policy. `on_event` receives the engine's events (header, one per
    step, summary). `seed` seeds the sampler (default: drawn from torch's RNG).
    """
    if generation_config is None or logits_processor is None or stopping_criteria is None:
        raise InvalidParameter("gammatune_generate is called by model.generate(..., custom_generate="
                               "gammatune_generate); to call it directly use gammatune_tui.hf.generate(model, ...)")
    check_arguments(input_ids, seed=seed, on_event=on_event, streamer=token_streamer, streamer_name="token_streamer")
    streamer = token_streamer
    prompt_shown = False
    if streamer is None:
        streamer = _frame_streamer()
        prompt_shown = streamer is not None   # generate has put the prompt into it already
    params = {k: kwargs.pop(k) for k in list(kwargs) if k in POLICY_KWARGS}
    refuse_unsupported(generation_config, input_ids, kwargs)
    settings = policy_settings(gamma_method, params)
    tokenizer = model_tokenizer(model, text_tokenizer)
    p = plan(generation_config, input_ids, logits_processor, stopping_criteria, _seed(seed))
    if stop_strings:
        from transformers.generation.stopping_criteria import StopStringCriteria

        p.stops.append(StopStringCriteria(tokenizer, [stop_strings] if isinstance(stop_strings, str) else list(stop_strings)))
    want_scores = bool(getattr(generation_config, "output_scores", False))
    want_logits = bool(getattr(generation_config, "output_logits", False))
    pair = pair_for(model, draft_model, text_tokenizer, engine)
    prompt = [int(i) for i in input_ids[0].tolist()]
    rows: dict | None = {} if (want_scores or want_logits) else None   # the target's raw logits by position
    if streamer is not None and not prompt_shown:
        streamer.put(input_ids.cpu())
    try:
        tokens = _decode(pair, settings, p, prompt, streamer, on_event, rows, (ngram_min, ngram_max))
    finally:   # a reader thread of a TextIteratorStreamer is released even when decoding fails
        if streamer is not None:
            streamer.end()
    sequences = torch.tensor([prompt + tokens], dtype=input_ids.dtype, device=input_ids.device)
    if not getattr(generation_config, "return_dict_in_generate", False):
        return sequences
    return _output(sequences, prompt, tokens, rows, p, want_scores, want_logits)


def _decode(pair: ModelPair, settings: PolicySettings, p: Plan, prompt: list[int], streamer: BaseStreamer | None,
            on_event: Callable[[Event], None] | None, rows: dict | None, ngram: tuple) -> list[int]:
    """Run the engine; the generated ids (cut at the first stop), streamed step by step."""
    if p.max_new < 1:
        return []
    from ..engine.drafting.draft_sources import DrafterSettings

    drafter = DrafterSettings.of(pair.drafter, ngram_min=ngram[0], ngram_max=ngram[1])
    decoder = SpeculativeDecoder(pair, settings, p.sampling, drafter=drafter, logits_processor=p.processors)
    decoder.eos_ids = p.eos
    decoder.target_rows = rows
    out: list[int] = []
    seq = list(prompt)
    stopped = False
    for event in decoder.generate(prompt, p.max_new):
        if on_event is not None:
            on_event(event)
        if stopped or not isinstance(event, StepEvent):
            continue
        new = [t.id for t in event.emitted]
        for i, tid in enumerate(new):
            seq.append(tid)
            if p.stops and _stop(p.stops, seq):
                new = new[: i + 1]
                stopped = True
                decoder.stop()   # the session ends at this step's boundary (its summary still comes)
                break
        out += new
        if streamer is not None and new:
            streamer.put(torch.tensor(new))
    return out


def _stop(criteria: list, seq: list[int]) -> bool:
    ids = torch.tensor([seq])
    return any(bool(torch.as_tensor(c(ids, None)).reshape(-1)[0]) for c in criteria)


def _output(sequences: torch.Tensor, prompt: list[int], tokens: list[int], rows: dict | None, p: Plan,
            want_scores: bool, want_logits: bool) -> GenerateDecoderOnlyOutput:
    """A GenerateDecoderOnlyOutput, with each generated token's logits and processed scores where asked."""
    from transformers.generation.utils import GenerateDecoderOnlyOutput

    scores = logits = None
    if want_scores or want_logits:
        assert rows is not None, "the decoder keeps each step's logits when scores or logits are asked for"
        raw = [rows[len(prompt) + i].clone() for i in range(len(tokens))]
        if want_logits:
            logits = tuple(raw)
        if want_scores:
            assert p.all_processors is not None, "generate hands its processors to a custom_generate callable"
            ids = sequences.cpu()
            scores = tuple(p.all_processors(cast(torch.LongTensor, ids[:, : len(prompt) + i].to(r.device)), r.clone())
                           for i, r in enumerate(raw))
    # transformers annotates `scores` as a 1-tuple; it holds one tensor per generated token, as its own generate's
    return GenerateDecoderOnlyOutput(sequences=cast(torch.LongTensor, sequences),
                                     scores=cast("tuple[torch.FloatTensor] | None", scores), logits=logits)


def _with_policy_kwargs(fn: Callable) -> Callable:
    """Name every policy parameter in `fn`'s signature: transformers passes a callable only what it names."""
    sig = inspect.signature(fn)
    params = [prm for prm in sig.parameters.values() if prm.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in POLICY_KWARGS
             if n not in sig.parameters]
    var = [prm for prm in sig.parameters.values() if prm.kind is inspect.Parameter.VAR_KEYWORD]
    setattr(fn, "__signature__", sig.replace(parameters=params + extra + var))
    return fn


gammatune_generate = _with_policy_kwargs(gammatune_generate)


def generate(model: PreTrainedModel, input_ids: torch.Tensor, *, streamer: BaseStreamer | None = None,
             tokenizer: PreTrainedTokenizerBase | None = None, **kwargs: Any) -> Any:
    """`model.generate(input_ids, custom_generate=gammatune_generate, **kwargs)` with `streamer=` and `tokenizer=` kept.

    The same keyword arguments as `generate` plus gammatune's (draft_model,
    gamma_method, the policy's parameters, on_event, seed, …). `tokenizer`
    is the target's (for stop strings and the events' text; by default the
    one in the model's folder)."""
    check_arguments(input_ids, seed=kwargs.get("seed"), on_event=kwargs.get("on_event"), streamer=streamer)
    if streamer is not None:
        kwargs["token_streamer"] = streamer
    if tokenizer is not None:
        kwargs["text_tokenizer"] = tokenizer
    # a causal LM: a PreTrainedModel that generates
    return cast("GenerationMixin", model).generate(input_ids, custom_generate=gammatune_generate, **kwargs)


__all__ = ["check_arguments", "gammatune_generate", "generate"]
