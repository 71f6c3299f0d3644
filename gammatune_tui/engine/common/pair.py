"""`ModelPair`: the one pair type — a target, a draft, a tokenizer, and what headers and reports say of them.

Every floor types a pair by this dataclass and reads its fields directly.
`load_pair` (loading/models.py) fills it from names and files; the Hugging
Face entry point (hf/pairs.py) wraps models a user already holds; the tests
build tiny real ones. A self-draft (`--draft self:int4`) is a pair whose
`draft` is the target's quantized copy and whose `self_draft` record says
which copy, at what precision, built in how long: the metadata lives here,
on the pair, not on the torch module.

Kept in a module that imports nothing heavy (no torch at import), so every
room can name it. What needs the rooms above — the runner pool
(runners/choice.py `runner_pool`), a self-draft's sibling pair
(loading/siblings.py `with_draft`) — is built there, on first use, and kept
on the pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence, cast

from ...errors import InvalidParameter
from .end_of_turn import collect_eos_ids
from .model_weights import model_bytes, model_precision, packed_copy_bytes
from .prompt_format import vicuna_format

if TYPE_CHECKING:   # annotations only: no torch or transformers at import
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


@dataclass(frozen=True)
class SelfDraft:
    """Which self-draft a pair's draft model is: its name, its precision in words, and its build time."""

    name: str           # the canonical `--draft` value: self:int4, self:int4:g64, self:int8, self:bf16
    precision: str      # "int4 g32", "int8, experts kept float32": what the header's draft precision says
    build_s: float      # seconds the quantized copy took to build (the load's "self-draft" stage)


@dataclass
class ModelPair:
    """A target, a draft that shares its vocabulary, and how to format prompts for them.

    Loaded for prompt lookup (`load_pair(drafter="prompt-lookup")`) a pair has
    no draft model: `draft` is None and `name_draft` names the source.
    `drafter` (a DrafterSettings) is the draft source its sessions use unless a
    decoder is given another; None: the draft model if there is one, else
    prompt lookup (drafting/draft_sources.py `pair_drafter`).
    """

    target: "PreTrainedModel"
    draft: "PreTrainedModel | None"   # None: prompt lookup, no draft model
    tokenizer: "PreTrainedTokenizerBase"
    device: "torch.device"
    dtype: "torch.dtype"
    name_target: str = "target"
    name_draft: str = "draft"
    dtype_why: str = ""   # why the target runs at `dtype` where auto chose it and it needs saying (auto_precision.py)
    is_demo: bool = False
    vicuna: bool = False
    preset: str | None = None
    quantize: str | None = None
    eos_ids: frozenset[int] = field(default_factory=frozenset)
    engine: str = "auto"  # auto | eager | static | graphs: how forward passes run (engine/runners)
    warmup_s: float = 0.0  # seconds the post-load warm-up took (0: none ran)
    load_s: dict[str, float] = field(default_factory=dict)  # load_pair's stages → seconds (load_stages.py)
    drafter: Any = None  # a DrafterSettings (drafting/ sits above common/, so not named here), or None
    self_draft: SelfDraft | None = None  # the draft model is this self-draft of the target (None: it is not)
    # built on first use by the rooms that own them, then kept: the runners (runners/choice.py), the
    # self-draft siblings by name (loading/siblings.py); a `dataclasses.replace` copy starts without them
    runner_pool: object = field(default=None, init=False, repr=False, compare=False)   # a runners.RunnerPool
    siblings: dict[str, "ModelPair"] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.eos_ids:
            self.eos_ids = collect_eos_ids(self.tokenizer, self.target)

    def models(self) -> dict[str, dict[str, Any]]:
        """Each model's precision and weight bytes (a self-draft: what it adds to the target's), for headers."""
        notes = [model_precision(self.target, self.quantize), self.dtype_why]
        packed = packed_copy_bytes(self.target)   # memory the target holds beyond its weights: say so, count it
        notes.append("verify packed" if packed else "")
        out = {"target": {"precision": ", ".join(n for n in notes if n),
                          "bytes": model_bytes(self.target) + packed}}
        if self.draft is not None:
            own = self.self_draft
            out["draft"] = {"precision": own.precision if own is not None else model_precision(self.draft),
                            "bytes": model_bytes(self.draft, self.target if own is not None else None)}
        return out

    def encode_prompt(self, prompt: str | Sequence[int] | Sequence[dict], raw: bool = False) -> list[int]:
        """Token ids for a prompt: raw text, or chat messages through the right format.

        Vicuna presets use the paper's system-prompt format (Fig. 2b); other
        tokenizers with a chat template use it; the rest get the raw text.
        """
        if not isinstance(prompt, str) and all(isinstance(i, int) and not isinstance(i, bool) for i in prompt):
            return [i for i in prompt if isinstance(i, int)]   # all of them (the test above)
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            if not all(isinstance(m, dict) for m in prompt):
                raise InvalidParameter("a prompt is text, token ids, or chat messages (dicts with 'role' and 'content')")
            messages = [dict(m) for m in prompt if isinstance(m, dict)]
            for m in messages:
                if not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                    raise InvalidParameter("each chat message needs a string 'role' and 'content'")
        tok = self.tokenizer
        if raw:
            text = prompt if isinstance(prompt, str) else "".join(m["content"] for m in messages if m["role"] != "system")
            return list(tok(text).input_ids)
        if self.vicuna:
            return list(tok(vicuna_format(messages)).input_ids)
        if getattr(tok, "chat_template", None):
            chat = cast(str, tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
            return list(tok(chat, add_special_tokens=False).input_ids)
        # A model without a chat template is a completion model: a conversation
        # is the running text itself (prompt, its continuation, the next prompt).
        text = "".join(m["content"] for m in messages if m["role"] != "system")
        return list(tok(text).input_ids)


__all__ = ["ModelPair", "SelfDraft"]
