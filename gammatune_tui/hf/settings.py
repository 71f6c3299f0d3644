"""What `generate` prepared, in the engine's terms: sampling, processors, stops, the policy; refusals in one line.

`generate` hands a `custom_generate` callable its prepared arguments: a
`GenerationConfig` with `max_length` resolved, a `LogitsProcessorList`
(the user's processors merged with the config's, the warpers last when
sampling) and a `StoppingCriteriaList` (max length, EOS, the user's). Each is
translated here:

* the trailing temperature / top-k / top-p warpers become the engine's
  `SamplingConfig` (served by the engine's batched warpers, as under
  `gammatune run`); everything before them, and any other warper, stays a
  processor applied to both models position by position;
* the max-length and EOS criteria become the engine's token budget and EOS
  set; the rest (stop strings, max time, the user's own) are checked after
  every emitted token, so output stops exactly where `generate`'s would;
* whatever the engine cannot honour (beams, several sequences, a batch,
  padding, attentions or hidden states, a cache carried in) is refused with
  one line naming it, never silently dropped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..errors import InvalidParameter
from ..engine.policies import PolicySettings
from ..engine.policies.policy_params import PolicyParams
from ..engine.common.sampling_config import SamplingConfig

if TYPE_CHECKING:   # what `generate` hands over; transformers loads with the user's models
    from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

# the policy's keyword arguments: γ0 and every field of PolicyParams (a method added later brings its own)
POLICY_KWARGS = ("gamma0",) + tuple(f.name for f in dataclasses.fields(PolicyParams))
# model kwargs `generate` passes that describe what the engine does anyway (its own caches, the whole prompt)
_HARMLESS = {"use_cache", "logits_to_keep", "position_ids", "cache_position", "attention_mask", "past_key_values",
             "cache", "synced_gpus"}


def policy_settings(method: str, params: dict[str, Any]) -> PolicySettings:
    """`gamma_method` and the policy's keyword arguments (None = the default) as PolicySettings."""
    given = {k: v for k, v in params.items() if v is not None}
    gamma0 = given.pop("gamma0", None)
    if gamma0 is None:
        return PolicySettings.build(method, **given)
    return PolicySettings.build(method, gamma0, **given)


@dataclass
class Plan:
    """One call's settings in the engine's terms."""

    sampling: SamplingConfig
    processors: list            # applied to both models before serving
    stops: list                 # stopping criteria checked after every emitted token
    eos: frozenset[int]
    max_new: int
    # the list as generate built it: the scores `output_scores` reports
    all_processors: LogitsProcessorList | None = None


def _split_warpers(processors: list) -> tuple[list, dict[str, Any]]:
    """(processors left, SamplingConfig fields) with the trailing temperature → top-k → top-p moved out."""
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    order = (TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)
    fields: dict[str, Any] = {}
    cut = len(processors)
    rank = len(order)
    while cut > 0:
        p = processors[cut - 1]
        kind = next((i for i, cls in enumerate(order) if type(p) is cls), None)
        if kind is None or kind >= rank or getattr(p, "filter_value", -float("inf")) != -float("inf"):
            break
        if kind == 0:
            fields["temperature"] = float(p.temperature)
        elif kind == 1:
            fields["top_k"] = int(p.top_k)
        else:
            if int(getattr(p, "min_tokens_to_keep", 1)) != 1:
                break
            fields["top_p"] = float(p.top_p)
        rank = kind
        cut -= 1
    return list(processors[:cut]), fields


def _eos_ids(config: GenerationConfig) -> frozenset[int]:
    eos = getattr(config, "eos_token_id", None)
    if eos is None:
        return frozenset()
    if isinstance(eos, torch.Tensor):
        eos = eos.reshape(-1).tolist()
    return frozenset(int(e) for e in ([eos] if isinstance(eos, int) else eos))


def refuse_unsupported(config: GenerationConfig, input_ids: torch.Tensor, model_kwargs: dict[str, Any]) -> None:
    """One line for each setting the engine cannot honour (the first found)."""
    if int(getattr(config, "num_beams", 1) or 1) > 1:
        raise InvalidParameter(f"num_beams={config.num_beams}: gammatune decodes one sequence (no beam search)")
    if int(getattr(config, "num_return_sequences", 1) or 1) > 1:
        raise InvalidParameter(f"num_return_sequences={config.num_return_sequences}: gammatune returns one sequence")
    if input_ids.dim() != 2 or input_ids.shape[0] != 1:
        raise InvalidParameter(f"gammatune decodes one sequence at a time: input_ids has shape {tuple(input_ids.shape)}"
                               " (batch size 1 needed; call it once per prompt)")
    for flag in ("output_attentions", "output_hidden_states"):
        if getattr(config, flag, False):
            raise InvalidParameter(f"{flag}=True is not supported by gammatune's decoding (scores and logits are)")
    if getattr(config, "prompt_lookup_num_tokens", None):
        raise InvalidParameter("prompt_lookup_num_tokens is transformers' own prompt lookup: with gammatune pass "
                               "draft_model='prompt-lookup'")
    if getattr(config, "token_healing", False):
        raise InvalidParameter("token_healing is not supported by gammatune's decoding")
    mask = model_kwargs.get("attention_mask")
    if isinstance(mask, torch.Tensor) and not bool((mask == 1).all()):
        raise InvalidParameter("attention_mask has padding: gammatune decodes one unpadded sequence")
    for name in ("past_key_values", "cache"):
        held = _held(model_kwargs.get(name))
        if held:
            raise InvalidParameter(f"{name} holds {held}: gammatune keeps its own caches; pass the whole sequence "
                                   "as input_ids instead")
    unknown = sorted(k for k, v in model_kwargs.items() if k not in _HARMLESS and v is not None)
    if unknown:
        raise InvalidParameter(f"{unknown[0]} is not supported by gammatune's decoding "
                               "(it decodes text from input_ids alone)")


def _held(cache: object) -> str | None:
    """What a cache passed to `generate` already holds ("12 cached tokens", "a recurrent state"), or None if empty.

    A cache of recurrent layers only (Mamba's, which `generate` builds itself)
    has no length to ask — `get_seq_length` raises — so its layers are asked
    whether they hold a state.
    """
    if cache is None or not hasattr(cache, "get_seq_length"):
        return None
    try:
        n = int(cache.get_seq_length())
    except ValueError:
        states = [getattr(layer, "has_previous_state", None) for layer in getattr(cache, "layers", [])]
        return "a recurrent state" if any(isinstance(s, dict) and any(s.values()) for s in states) else None
    return f"{n} cached tokens" if n > 0 else None


def plan(config: GenerationConfig, input_ids: torch.Tensor, processors: LogitsProcessorList | None,
         criteria: StoppingCriteriaList | None, seed: int | None) -> Plan:
    """The engine's settings for one call (after `refuse_unsupported`)."""
    from transformers.generation.stopping_criteria import EosTokenCriteria, MaxLengthCriteria

    prompt_len = int(input_ids.shape[1])
    max_length = int(config.max_length)
    eos = _eos_ids(config)
    procs = list(processors or [])
    greedy = not bool(getattr(config, "do_sample", False))
    fields: dict[str, Any] = {}
    if greedy:
        rest = procs
    else:
        rest, fields = _split_warpers(procs)
        fields.setdefault("temperature", 1.0)
    sampling = SamplingConfig(seed=seed, **fields)
    stops = []
    for c in list(criteria or []):
        if isinstance(c, MaxLengthCriteria) and int(c.max_length) >= max_length:
            continue   # the engine's token budget (max_length − prompt) is the same stop
        if isinstance(c, EosTokenCriteria) and frozenset(c.eos_token_id.reshape(-1).tolist()) <= eos:
            continue   # the engine ends at these EOS ids itself
        stops.append(c)
    return Plan(sampling=sampling, processors=rest, stops=stops, eos=eos, max_new=max_length - prompt_len,
                all_processors=processors)


__all__ = ["POLICY_KWARGS", "Plan", "plan", "policy_settings", "refuse_unsupported"]
