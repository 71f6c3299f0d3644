"""The engine's names and defaults that the command line shows before anything loads.

`--help` and the option declarations need the runner names (`--engine`) and
the draft sources (`--drafter`, each source's own parameters); the modules that
implement them import torch and transformers. Kept here, in a module that
imports no heavy package, so parsing a command line costs no torch import (tests/cli/test_lazy_imports.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .param_spec import ParamSpec

# how forward passes run (engine/runners/choice.py)
ENGINES: tuple[str, ...] = ("auto", "eager", "static", "graphs")

# who drafts: one row per draft source; engine/drafting/registry.py binds each name to its class by import
# (torch-side: the command line reads these rows without torch), draft_sources.py builds it for a session
@dataclass(frozen=True)
class SourceSpec:
    """One draft source: its name, whether it loads a draft checkpoint, its own parameters (`ParamSpec` rows: flags, `--help`, checks, the header's
    `drafter_params`), whether bench/sim has a trace kind that records and replays it, whether it drafts a
    point mass, and which transformers path bench races it against."""

    name: str
    loads_draft: bool   # drafts with a draft model loaded from its own files (--draft; the loaders read it)
    help: str
    params: tuple[ParamSpec, ...] = ()
    ordered: tuple[tuple[str, str], ...] = ()   # (lo, hi): parameter lo must not exceed parameter hi
    has_traces: bool = False   # bench --simulate replays it: bench/sim/trace_kinds.py KINDS has its kind (by import)
    short: str = ""   # compare's label for its contestant (default: the name)
    point_mass: bool = False   # proposes deterministically from the text (q = δ_x): one greedy trace serves it
    matrix_column: str = ""   # its column in the family matrix (loading/families.py PATHS); "": none of its own
    hf_peer: str = ""   # the `generate` argument bench races it against: "assistant_model", "prompt_lookup_num_tokens", or none
    # a head read from its own folder: the parameter that holds the folder (`--draft NAME:PATH` sets it), and the
    # config.json fields that recognise such a folder given as plain `--draft PATH`: (key, value) pairs, any one
    # matching (the value equal to the key's, or in its list)
    head_param: str = ""
    head_config: tuple[tuple[str, str], ...] = ()
    # what each serving engine calls this source (bench/deploy/source_commands.py prints the command): vLLM's
    # speculative-config method, SGLang's --speculative-algorithm, llama.cpp's --spec-type, transformers'
    # generate argument; an engine not listed runs no such source
    serve_as: tuple[tuple[str, str], ...] = ()


def _ngram(name: str, default: int, label: str, help: str) -> ParamSpec:
    return ParamSpec(name, int, default, label, help, lo=1, hi=32)


# n-gram sizes of prompt lookup. transformers matches n = max_matching_ngram_size (default 2) down
# to 1; these defaults were picked with the simulator on the demo pair (docs/benchmarks.md,
# "Prompt lookup"): a 1-token match is worth proposing when a wrong window costs one wider verify.
_NGRAMS = (_ngram("ngram_min", 1, "n-gram min", "shortest n-gram to match"),
           _ngram("ngram_max", 3, "n-gram max", "longest n-gram to match, tried first"))
SOURCES: tuple[SourceSpec, ...] = (
    SourceSpec("model", True, "the draft model, with its KV cache (the default)",
               has_traces=True, matrix_column="draft", hf_peer="assistant_model"),
    SourceSpec("prompt-lookup", False,
               "copies what followed the text's last words earlier in the prompt or output", _NGRAMS,
               (("ngram_min", "ngram_max"),), True, "lookup", point_mass=True,
               matrix_column="prompt-lookup", hf_peer="prompt_lookup_num_tokens",
               serve_as=(("vllm", "ngram"), ("sglang", "NGRAM"), ("llama.cpp", "ngram-simple"),
                         ("transformers", "prompt_lookup_num_tokens"))),
    SourceSpec("ngram-pool", False,
               "the same over every earlier turn's prompt and answer too (one decoder's)",
               _NGRAMS, (("ngram_min", "ngram_max"),), True, "pool", point_mass=True,
               hf_peer="prompt_lookup_num_tokens"),
    SourceSpec("mtp", False,
               "the multi-token-prediction head shipped in the target's own checkpoint, chained (docs/heads.md)",
               (ParamSpec("mtp_pre_norm", bool, False, "MTP pre-norm",
                          "feed the head the target's last hidden state before the final norm (default: after)"),
                ParamSpec("mtp_vocab", int, 0, "MTP draft vocabulary",
                          "draft over the N most frequent tokens only (FR-Spec; ranked by token id, the tokenizer's "
                          "special tokens first; still exact); 0: the whole vocabulary", lo=0),
                ParamSpec("mtp_vocab_file", str, "", "MTP vocabulary ranking",
                          "rank --mtp-vocab's tokens by this file instead of by id: token ids most frequent first "
                          "(.pt as FR-Spec's and SGLang's --speculative-token-map, or .json), or text to count")),
               has_traces=True, short="mtp", matrix_column="mtp",
               serve_as=(("vllm", "mtp"), ("sglang", "NEXTN"), ("llama.cpp", "draft-mtp"), ("transformers", "use_mtp"))),
    SourceSpec("eagle3", False,
               "an EAGLE-3 head from its own folder (SafeAILab's or speculators' format): one layer over three "
               "target layers, its reduced vocabulary mapped by d2t (--draft eagle3:PATH; docs/heads-eagle-dflash.md)",
               (ParamSpec("eagle3_head", str, "", "EAGLE-3 head", "the EAGLE-3 head's folder"),),
               has_traces=True, short="eagle3", head_param="eagle3_head", head_config=(("architectures", "LlamaForCausalLMEagle3"), ("speculators_model_type", "eagle3")),
               # llama.cpp (common/speculative.cpp at 001d906, common_speculative_impl_draft_eagle3): the head's GGUF
               # (arch eagle3) as the draft model; the type is never auto-detected from the GGUF, so it is named
               serve_as=(("vllm", "eagle3"), ("sglang", "EAGLE3"), ("llama.cpp", "draft-eagle3"))),
    SourceSpec("dflash", False,
               "a DFlash block drafter from its own folder (transformers' muse_glimmer_assistant): the target's "
               "layers as context, a whole block per forward (--draft dflash:PATH; docs/heads-eagle-dflash.md)",
               (ParamSpec("dflash_head", str, "", "DFlash drafter", "the DFlash drafter's folder"),),
               has_traces=True, short="dflash", head_param="dflash_head",
               head_config=(("model_type", "muse_glimmer_assistant"),),
               # llama.cpp (common/speculative.cpp at 001d906, common_speculative_impl_draft_dflash): the drafter's
               # GGUF (arch dflash) as the draft model, K clamped to the block size - 1
               serve_as=(("vllm", "dflash"), ("sglang", "DFLASH"), ("llama.cpp", "draft-dflash"))),
    SourceSpec("gemma4-assistant", False,
               "a Gemma 4 assistant from its own folder (gemma4_assistant): four layers over the target's last keys "
               "and values, one token per forward at the bonus position (--draft gemma4-assistant:PATH; "
               "docs/heads-eagle-dflash.md)",
               (ParamSpec("assistant_head", str, "", "Gemma 4 assistant", "the Gemma 4 assistant's folder"),),
               has_traces=True, short="assistant", head_param="assistant_head",
               head_config=(("model_type", "gemma4_assistant"), ("model_type", "gemma4_unified_assistant")),
               # vLLM ≥ 0.21 (PR #41745): method mtp with the assistant as the model; SGLang PR #24436; llama.cpp
               # (common/speculative.cpp at 001d906): draft-mtp with the assistant's GGUF as the draft model, which
               # shares the target's KV cache (common_speculative_impl_draft_mtp's is_mem_shared mode)
               serve_as=(("vllm", "mtp"), ("sglang", "FROZEN_KV_MTP"), ("llama.cpp", "draft-mtp"),
                         ("transformers", "assistant_model"))),
)
BY_SOURCE: dict[str, SourceSpec] = {s.name: s for s in SOURCES}
assert len(BY_SOURCE) == len(SOURCES), "every draft source has a name of its own"
MODEL = SOURCES[0].name
DRAFTERS: tuple[str, ...] = tuple(BY_SOURCE)
MODEL_FREE: tuple[str, ...] = tuple(s.name for s in SOURCES if not s.loads_draft)
SOURCE_PARAMS: dict[str, ParamSpec] = {p.name: p for s in SOURCES for p in s.params}
"""Every source parameter by name, once (sources may share one: the same flag sets it for each)."""
assert all(SOURCE_PARAMS[p.name] == p for s in SOURCES for p in s.params), \
    "sources that share a parameter's name share its row (one flag, one meaning)"


def head_source(draft: object, config: dict | None = None) -> tuple[str, str] | None:
    """(source name, head folder) when a `--draft` value names a head rather than a draft model: `NAME:PATH` for a
    source read from its own folder, or a folder whose config.json (`config`, read by the caller) is such a
    head's; None otherwise (a draft model, a self-draft)."""
    if not isinstance(draft, str):
        return None
    name, sep, path = draft.partition(":")
    for s in SOURCES:
        if not s.head_param:
            continue
        if sep and name.strip().lower() == s.name:
            return s.name, path
        if config and any(config.get(k) == v or (isinstance(config.get(k), list) and v in config[k])
                          for k, v in s.head_config):
            return s.name, draft
    return None


def sources_table() -> str:
    """The draft sources' table of docs/drafting.md, from the rows (a test compares them)."""
    lines = ["| `--drafter` | draft model | its parameters | what drafts |", "|---|---|---|---|"]
    for s in SOURCES:
        params = ", ".join(f"`{p.cli_flag}` ({p.range_text(unicode=True)}"
                           + (f", default {p.default})" if p.default != "" else ")") for p in s.params)
        lines.append(f"| `{s.name}` | {'needed' if s.loads_draft else 'none'} | {params or '—'} | {s.help} |")
    return "\n".join(lines)


# a draft built from the target's own weights at load (engine/drafting/self_draft.py): `--draft self:int4[:gN]`
SELF_PREFIX = "self:"
SELF_FORMATS: tuple[str, ...] = ("int4", "int8", "bf16")
SELF_DRAFTS: tuple[str, ...] = tuple(SELF_PREFIX + f for f in SELF_FORMATS)


def is_self_draft(name: object) -> bool:
    """Whether a `--draft` value names a self-draft (`self:…`), valid or not (so a typo is refused as one)."""
    return isinstance(name, str) and name.strip().lower().startswith(SELF_PREFIX)

# the chat's drafter switch, in its palette's order (session/turns.py `switch_drafter`)
CHAT_DRAFTERS: tuple[str, ...] = (MODEL, "self:int8", "self:int4", *MODEL_FREE)
