"""`--draft mtp`: the multi-token-prediction head that ships inside the target's own checkpoint drafts.

The head (mtp_head.py, read by mtp_layouts.py) reads the target: for every
position the sequence kept, the target's last hidden state (after the final
norm by default, `--mtp-pre-norm` for before it; runners/hidden.py hands the
rows over after the prefill and after every step) and the token that
followed it. A draft is the head run on the rows it has not seen yet — its
KV cache follows the target's — then chained: each next token from the
head's own last output and the token it just drafted, as many as the γ
policy asks (not the head's layer count). The chained rows are dropped as
soon as the window is drafted: after the verify, the target's own rows of
the accepted positions replace them, so the head's cache always equals the
one a fresh run over the accepted text would build (exact greedy, and the
sampled law the verify corrects to the target's).

The proposal law q is the head's softmax (served through the session's
temperature, top-k, top-p): the accept test is the draft model's, and the
policy reads the head's own top-1 and chosen probabilities. `--mtp-vocab N`
takes that softmax over N tokens only (FR-Spec, frspec.py): the head's
projection, most of a drafting step at a 248k vocabulary, shrinks to N
rows, and the verify still corrects q to the target's law.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import torch

from . import Draft, DraftSource, SourceContext, chain_draft
from .frspec import DraftVocab, check_file, check_size, ranking_of, special_ids, vocab_width
from .mtp_head import MtpHead
from .mtp_layouts import DEFAULT_FEED, read_head
from ..policies.policy_base import Policy
from ..runners.hidden import TargetReads, TargetRows
from ..common.sampling import Served
from ...errors import ModelLoadError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from . import TargetConfig


def target_folder(target: PreTrainedModel) -> str:
    """The folder the target was loaded from (where its head's tensors are), or one line."""
    path = str(getattr(target.config, "_name_or_path", "") or getattr(target.config, "name_or_path", ""))
    if not path:
        raise ModelLoadError("--draft mtp reads the head from the target's checkpoint folder, and this target "
                             "was not loaded from one")
    if not Path(path).exists():   # a hub id: its snapshot in the local cache (where the target was read)
        try:
            from huggingface_hub import snapshot_download

            return str(snapshot_download(path, local_files_only=True))
        except Exception:   # not cached, or not a hub id: read_head says there is no folder
            return path
    return path


def load_head(target: PreTrainedModel) -> MtpHead:
    """The MTP head of a loaded target, from the safetensors it was loaded from."""
    return MtpHead(target, read_head(target_folder(target), target.config))


_HEADS: "weakref.WeakKeyDictionary[PreTrainedModel, MtpHead]" = weakref.WeakKeyDictionary()


def head_of(target: PreTrainedModel) -> MtpHead:
    """The target's head, read once per loaded target (load_pair reads it, so a checkpoint without one is
    refused before anything runs; every session of that target reuses it)."""
    head = _HEADS.get(target)
    if head is None:
        head = _HEADS[target] = load_head(target)
    return head


def describe(head: MtpHead) -> str:
    """'mtp, 1 layer, chained': the subtitle's words for the head."""
    return f"mtp, {head.layers} layer{'s' if head.layers != 1 else ''}, chained"


def draft_vocab_of(params: dict[str, Any], head: MtpHead, tokenizer: PreTrainedTokenizerBase,
                   eos: Iterable[int]) -> tuple[int, tuple[int, ...]]:
    """(N, the ids ranked first) of a session's draft vocabulary: the special tokens, then `--mtp-vocab-file`'s
    ranking; N 0 with a file is all the ids it ranks, N 0 without one the whole vocabulary (no reduction)."""
    n, path = int(params.get("mtp_vocab", 0)), str(params.get("mtp_vocab_file") or "")
    first = special_ids(tokenizer, eos)
    if path:
        width = vocab_width(head.model)
        first = tuple(dict.fromkeys(first + ranking_of(path, tokenizer, width)))
        n = n or min(len([i for i in first if i < width]), width)
    return n, first


class MtpSource(DraftSource):
    """One session's MTP drafting over the target's rows (see the module docstring)."""

    runner = None

    def __init__(self, target: PreTrainedModel, head: MtpHead, pre_norm: bool = False, vocab: DraftVocab | None = None):
        self.target = target
        self.head = head
        self.pre_norm = pre_norm
        self.vocab = vocab   # the reduced draft vocabulary (--mtp-vocab N); None: the whole one
        self.reads = TargetReads(last=True) if pre_norm else TargetReads(normed=True)
        self.waiting: list[torch.Tensor] = []   # target rows of positions head.length … not run by the head yet
        self.last_out: torch.Tensor | None = None   # the head's output at its last committed row

    @classmethod
    def create(cls, params: dict[str, Any], made: SourceContext) -> "MtpSource":
        target = made.pair.target
        prev = made.previous
        head = prev.head if isinstance(prev, MtpSource) and prev.target is target else head_of(target)
        head.reset()   # a one-token prompt hands no prefill rows: no earlier session's cache may remain
        n, first = draft_vocab_of(params, head, made.pair.tokenizer, made.pair.eos_ids)
        vocab = head.draft_vocab(n, first) if 0 < n < vocab_width(head.model) else None   # N = V: the same law
        return cls(target, head, bool(params.get("mtp_pre_norm", DEFAULT_FEED == "pre")), vocab)

    @classmethod
    def prepare(cls, params: dict[str, Any], target: PreTrainedModel) -> str:
        """At load: the head read (none: one line), a draft vocabulary wider than the target's refused in one
        line, and the head named with its vocabulary when reduced."""
        head = head_of(target)
        n, path = int(params.get("mtp_vocab", 0)), str(params.get("mtp_vocab_file") or "")
        width = vocab_width(head.model)
        check_size(n, width)
        if path:
            check_file(path)
        if not (n or path):
            return describe(head)
        return f"{describe(head)}, draft vocabulary {f'{n:,}' if n else 'from ' + path}"

    def law(self, row: torch.Tensor, served: Served) -> torch.Tensor:
        """q over the target's vocabulary from one head output row: the whole softmax, or FR-Spec's over S."""
        if self.vocab is not None:
            return self.vocab.law(row, served)
        logits = self.head.logits(row)
        return torch.softmax(logits, dim=-1) if served.greedy else served.probs(logits.unsqueeze(0))[0]

    def observe(self, rows: TargetRows) -> None:
        """Keep the target's rows; forget the head's rows at or past rows.start (a rejected window's).
        The prefill's rows (start 0) come before `start`, and open the session's head cache afresh."""
        done = self.head.length
        if rows.start == 0:
            self.head.reset()
            self.waiting = []
            self.last_out = None
        elif rows.start < done:
            self.head.keep(rows.start)
            self.waiting = []
            self.last_out = None
        else:
            del self.waiting[rows.start - done:]
        self.waiting.extend(rows.hidden[:, 0].unbind(0))

    def _catch_up(self, ids: list[int]) -> torch.Tensor | None:
        """Run the head over the rows it has not seen (the token after each is in `ids`): its last output."""
        if self.waiting:
            start = self.head.length
            out = self.head.extend(torch.stack(self.waiting), ids[start + 1:start + 1 + len(self.waiting)])
            self.waiting = []
            self.last_out = out[-1]
        return self.last_out

    def step_parts(self, ids: list[int], served: Served) -> dict[str, Callable[[], object]]:
        """A chained step's two parts: the head's layer (one row, rewound after) and its law over the vocabulary
        (the projection and the softmax; FR-Spec's over its N tokens)."""
        h = self._catch_up(ids)
        if h is None:
            return {}
        kept, row = self.head.length, h

        def layer() -> object:
            try:
                return self.head.extend(row.unsqueeze(0), [ids[-1]])
            finally:
                self.head.keep(kept)

        width = self.vocab.size if self.vocab is not None else vocab_width(self.head.model)
        return {"the head's layer": layer, f"its projection over {width:,} tokens": lambda: self.law(row, served)}

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:
        out = Draft()
        if window <= 0:
            return out
        h = self._catch_up(ids)
        if h is None:   # a one-token prompt: no row to draft from yet
            return out
        kept = self.head.length
        try:   # chained: each next row is the head's own output, one position on
            return chain_draft(h, window, lambda row: self.law(row, served), lambda row, x: self.head.extend(row.unsqueeze(0), [x])[-1],
                               served=served, gen=gen, policy=policy, eos=eos)
        finally:
            self.head.keep(kept)   # the chained rows are speculative: the target's rows replace them
