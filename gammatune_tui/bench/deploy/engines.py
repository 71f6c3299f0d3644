"""One row per serving engine: its knobs' grid, how a setting plays in gammatune's simulator, and its command.

Each engine runs only its own rule, and each of those rules is one that
gammatune already plays exactly: a fixed window (vLLM's
`num_speculative_tokens`, SGLang's `--speculative-num-steps`, transformers'
`constant` schedule), transformers' heuristic schedule and confidence
threshold, and llama.cpp's n-max / n-min / p-min (llamacpp.py). A `Setting`
is one point of an engine's grid: its knobs as the engine names them, a
function that plays it over one trace, and the command that runs it.

The syntax is the one in the sources cited by `Engine.source` (docs/deploy.md
quotes them); `FLAGS` lists every flag and key a command may print, and
tests/bench/test_deploy.py holds the printed commands to it.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Callable, Sequence

from ...engine.policies import PolicySettings
from ..results import RunRecord
from ..sim import simulate as sim
from ..sim.cost_model import CostModel
from . import llamacpp

Player = Callable[[Any, int, CostModel], RunRecord]   # (trace, max_new_tokens, cost) → one priced session


@dataclass(frozen=True)
class Setting:
    """One point of an engine's grid."""

    engine: str
    label: str                       # short, for tables: "K=4", "n-max 8, n-min 0, p-min 0.75"
    knobs: dict[str, Any]            # as the engine names them, in its order
    play: Player = field(compare=False, repr=False)
    default: bool = False            # the engine's own default setting


def _policy(method: str, gamma0: int, **params: Any) -> Player:
    chosen = PolicySettings.build(method, gamma0, **params)   # bounds widen to keep γ0, as the doctor's grid does
    return lambda trace, max_new, cost: sim.play_trace(trace, chosen.make(), max_new, cost)


def _llama(n_max: int, n_min: int, p_min: float) -> Player:
    return lambda trace, max_new, cost: llamacpp.play(trace, n_max, n_min, p_min, max_new, cost)


def _stem(name: str) -> str:
    return PurePath(name.rstrip("/")).name or name


@dataclass(frozen=True)
class Engine:
    """A serving engine: where its syntax comes from, its grid, its command, and what it cannot run."""

    name: str                                   # what --for takes
    title: str
    source: str                                 # the engine version / file the syntax and rule are from
    grid: Callable[[Sequence[int]], list[Setting]]
    command: Callable[[str, str, Setting], str]
    self_draft: str                             # how (or whether) it runs a quantized copy of the target as draft
    lookup: str                                 # how (or whether) it runs prompt lookup
    notes: tuple[str, ...] = ()
    no_default: str = ""                        # what to say when the engine's default is not in the grid


# --- vLLM ---------------------------------------------------------------------------------------------------
def _vllm_grid(gammas: Sequence[int]) -> list[Setting]:
    return [Setting("vllm", f"K={k}", {"num_speculative_tokens": k}, _policy("specdecode", k)) for k in gammas]


def _vllm_command(target: str, draft: str, s: Setting) -> str:
    config = {"model": draft, "num_speculative_tokens": s.knobs["num_speculative_tokens"], "method": "draft_model"}
    return f"vllm serve {shlex.quote(target)} --speculative-config {shlex.quote(json.dumps(config))}"


# --- SGLang -------------------------------------------------------------------------------------------------
SGLANG_DEFAULT_STEPS = 3   # STANDALONE's auto default (docs/advanced_features/speculative_decoding.md)


def _sglang_grid(gammas: Sequence[int]) -> list[Setting]:
    return [Setting("sglang", f"steps={k}", {"speculative_num_steps": k}, _policy("specdecode", k),
                    default=k == SGLANG_DEFAULT_STEPS) for k in sorted(set(gammas) | {SGLANG_DEFAULT_STEPS})]


def _sglang_command(target: str, draft: str, s: Setting) -> str:
    k = s.knobs["speculative_num_steps"]
    return (f"python -m sglang.launch_server --model-path {shlex.quote(target)} --speculative-algorithm STANDALONE "
            f"--speculative-draft-model-path {shlex.quote(draft)} --speculative-num-steps {k} "
            f"--speculative-eagle-topk 1 --speculative-num-draft-tokens {k + 1}")


# --- llama.cpp ----------------------------------------------------------------------------------------------
LLAMA_DEFAULT = (3, 0, 0.0)                 # n-max, n-min, p-min (tools/server/README.md)
LLAMA_P_MIN = (0.0, 0.5, 0.75, 0.9)         # 0.75 was the default before p-min moved to 0.00
LLAMA_N_MIN = (0, 2)


def _llama_grid(gammas: Sequence[int]) -> list[Setting]:
    out = []
    for n_max in sorted(set(gammas) | {LLAMA_DEFAULT[0]}):
        for p_min in LLAMA_P_MIN:
            for n_min in LLAMA_N_MIN:
                if n_min > n_max or (p_min == 0.0 and n_min):   # with p-min 0 every draft is n-max long
                    continue
                out.append(Setting("llama.cpp", f"n-max {n_max}, n-min {n_min}, p-min {p_min:g}",
                                   {"n_max": n_max, "n_min": n_min, "p_min": p_min},
                                   _llama(n_max, n_min, p_min), default=(n_max, n_min, p_min) == LLAMA_DEFAULT))
    return out


def _llama_command(target: str, draft: str, s: Setting) -> str:
    k = s.knobs
    return (f"llama-server -m {shlex.quote(_stem(target) + '.gguf')} -md {shlex.quote(_stem(draft) + '.gguf')} "
            f"--spec-draft-n-max {k['n_max']} --spec-draft-n-min {k['n_min']} --spec-draft-p-min {k['p_min']:g}")


# --- transformers -------------------------------------------------------------------------------------------
HF_THRESHOLDS = (0.2, 0.4, 0.6)             # 0.4 is transformers' default assistant_confidence_threshold
HF_DEFAULT = (20, "constant", 0.4)          # GenerationConfig's defaults (generation/configuration_utils.py)


def _hf_grid(gammas: Sequence[int]) -> list[Setting]:
    out = []
    cap = max(gammas)   # transformers' heuristic has no cap: played up to the largest window examined
    for k in gammas:
        out.append(Setting("transformers", f"K={k} constant, threshold 0",
                           {"num_assistant_tokens": k, "num_assistant_tokens_schedule": "constant",
                            "assistant_confidence_threshold": 0.0}, _policy("specdecode", k)))
        out.append(Setting("transformers", f"K={k} heuristic, threshold 0",
                           {"num_assistant_tokens": k, "num_assistant_tokens_schedule": "heuristic",
                            "assistant_confidence_threshold": 0.0},
                           _policy("hf-heuristic", k, gamma_min=1, gamma_max=max(cap, k))))
        for tau in HF_THRESHOLDS:
            out.append(Setting("transformers", f"K={k} constant, threshold {tau:g}",
                               {"num_assistant_tokens": k, "num_assistant_tokens_schedule": "constant",
                                "assistant_confidence_threshold": tau},
                               _policy("assistant-threshold", k, tau=tau, dynamic_tau=True),
                               default=(k, "constant", tau) == HF_DEFAULT))
    return out


def _hf_command(target: str, draft: str, s: Setting) -> str:
    k = s.knobs
    return (f"assistant.generation_config.update(num_assistant_tokens={k['num_assistant_tokens']}, "
            f"num_assistant_tokens_schedule={k['num_assistant_tokens_schedule']!r}, "
            f"assistant_confidence_threshold={k['assistant_confidence_threshold']:g}); "
            f"model.generate(**inputs, assistant_model=assistant)   # model: {target}, assistant: {draft}")


ENGINES: tuple[Engine, ...] = (
    Engine("vllm", "vLLM", "vLLM docs/features/speculative_decoding/draft_model.md (commit 497fb83)",
           _vllm_grid, _vllm_command,
           "no self-draft mode; the nearest: a 4-bit checkpoint of the target as the draft model",
           'prompt lookup: --speculative-config \'{"method": "ngram", "num_speculative_tokens": K, '
           '"prompt_lookup_max": 4, "prompt_lookup_min": 1}\'',
           no_default="none: num_speculative_tokens must be given"),
    Engine("sglang", "SGLang", "SGLang docs/advanced_features/speculative_decoding.md (commit fc6d465)",
           _sglang_grid, _sglang_command,
           "no self-draft mode; the nearest: a 4-bit checkpoint of the target as --speculative-draft-model-path",
           "prompt lookup: --speculative-algorithm NGRAM (CUDA only)",
           ("--speculative-adaptive (the EMA tiers gammatune plays as ema-tiers) runs only with "
            "--speculative-algorithm EAGLE and topk 1; with STANDALONE SGLang falls back to the fixed steps",)),
    Engine("llama.cpp", "llama.cpp", "llama.cpp tools/server/README.md (commit 00dc805) and "
           "common/speculative.cpp (commit 001d906)", _llama_grid, _llama_command,
           "no self-draft mode; the nearest: a Q4_0 GGUF of the target as -md",
           "prompt lookup: --spec-type ngram-simple (or ngram-map-k, ngram-mod, ngram-cache with -lcs/-lcd)",
           ("--spec-draft-p-min defaults to 0.00: every draft runs to n-max however unsure the draft is",)),
    Engine("transformers", "transformers", "transformers 5.24.0 generation/configuration_utils.py and "
           "generation/candidate_generator.py (installed here)", _hf_grid, _hf_command,
           "no self-draft mode; the nearest: a 4-bit copy of the target as assistant_model",
           "prompt lookup: generate(..., prompt_lookup_num_tokens=K)",
           ("the knobs are read from the assistant's generation_config, not from generate()'s arguments",
            "a threshold above 0 adapts itself (ROC) when scikit-learn is installed, as played here; without it, "
            "it stays fixed",
            "the default num_assistant_tokens=20 with threshold 0.4: set them, or get the default"),
           no_default="K=20, threshold 0.4: not played (give --gammas up to 20)"),
)
BY_NAME: dict[str, Engine] = {e.name: e for e in ENGINES}
ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "hf": "transformers", "vllm": "vllm",
           "sglang": "sglang"}

# every flag and config key a printed command may carry, per engine (held against the cited sources by a test)
FLAGS: dict[str, tuple[str, ...]] = {
    "vllm": ("--speculative-config", "model", "num_speculative_tokens", "method"),
    "sglang": ("--model-path", "--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
               "--speculative-eagle-topk", "--speculative-num-draft-tokens"),
    "llama.cpp": ("-m", "-md", "--spec-draft-n-max", "--spec-draft-n-min", "--spec-draft-p-min"),
    "transformers": ("num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold",
                     "assistant_model"),
}


def parse_engines(text: str) -> list[Engine]:
    """`--for vllm,llama.cpp` → the engines (all four with 'all'); an unknown name raises ValueError naming them."""
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    if names == ["all"]:
        return list(ENGINES)
    out: list[Engine] = []
    for n in names:
        e = BY_NAME.get(ALIASES.get(n, n))
        if e is None:
            raise ValueError(f"unknown engine {n!r}; expected {', '.join(BY_NAME)} or all")
        if e not in out:
            out.append(e)
    if not out:
        raise ValueError(f"name at least one engine: {', '.join(BY_NAME)} or all")
    return out


__all__ = ["ENGINES", "BY_NAME", "FLAGS", "Engine", "Setting", "parse_engines"]
