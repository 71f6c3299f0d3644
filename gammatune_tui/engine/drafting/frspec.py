"""A head's reduced draft vocabulary (FR-Spec, arXiv 2502.14856): logits over the N most frequent tokens only.

Why. A head's layer is one decoder layer; its projection is the target's
whole unembedding (Qwen3.5-0.8B: 248,320 rows of 1,024). On a CPU that
matrix-vector product is most of a drafting step (docs/benchmarks-heads.md).
FR-Spec drafts over a subset S of the vocabulary instead: the rows of S are
sliced out of the unembedding once, at the first session, and each draft
token costs |S| rows, not V.

Still lossless. The proposal law q is the softmax over S (served through the
session's temperature, top-k, top-p) placed at S's ids, zero everywhere
else: a token outside S is never drafted, and the verify's accept test
(min(1, p/q) on the drafted token, the residual max(0, p − q) on a
rejection) covers it, since the residual keeps its whole p. Greedy drafts
the argmax over S; the verify picks the target's argmax whatever was drafted.

Which N tokens. Real FR-Spec counts token frequencies over a large corpus
(SlimPajama-627B) with the model's tokenizer and ships the top-N ids; SGLang
reads such a list as `--speculative-token-map`. gammatune ships no corpus, so
by default it ranks by token id: a byte-level BPE tokenizer (Qwen's, Llama's,
GPT-2's) numbers its tokens in merge order, and a merge is learnt in the
order of its pair's frequency in the tokenizer's own training text, so low
ids are the frequent ones. `--mtp-vocab-file` gives the ranking instead:
such a list of ids (most frequent first; `.pt` as FR-Spec's and SGLang's,
or `.json`), or text of the user's own domain, tokenized and counted. The
tokenizer's added and special tokens (EOS, the chat template's markers),
which sit at the end of the id range, always come first: an answer's end
must stay draftable. docs/heads.md says how to choose N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import torch

from ..common.sampling import Served
from ...errors import InvalidParameter

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase
    from transformers.modeling_layers import MtpModel


def vocab_width(model: MtpModel) -> int:
    """The width of a head's logits over the target's vocabulary (the unembedding's rows, or transformers'
    `unpadded_vocab_size` where the checkpoint pads them)."""
    rows = int(model.shared_head.weight.shape[0])
    unpadded = getattr(model.config, "unpadded_vocab_size", None)
    return int(unpadded) if unpadded is not None and unpadded < rows else rows


def check_size(n: int, width: int) -> None:
    """Refuse, in one line, a draft vocabulary larger than the target's."""
    if n > width:
        raise InvalidParameter(f"--mtp-vocab {n}: the target's vocabulary has only {width:,} tokens "
                               "(give at most that, or 0 for the whole vocabulary)")


def special_ids(tokenizer: PreTrainedTokenizerBase, eos: Iterable[int]) -> tuple[int, ...]:
    """The ids S always holds: the EOS ids and the tokenizer's added and special tokens, in id order."""
    keep = {int(i) for i in eos if int(i) >= 0}
    for name in ("all_special_ids", "added_tokens_decoder"):
        try:
            found = getattr(tokenizer, name, None)
        except Exception:   # a tokenizer that computes these lazily and cannot: rank by id alone
            found = None
        if found:
            keep.update(int(i) for i in found if isinstance(i, int) and i >= 0)
    return tuple(sorted(keep))


def read_ranking(path: str, tokenizer: PreTrainedTokenizerBase, width: int) -> tuple[int, ...]:
    """Token ids, most frequent first, from `--mtp-vocab-file`: a `.pt` tensor or list of ids, a `.json` list of
    ids, or any other file as UTF-8 text, tokenized and counted (ties by id); one line for anything else."""
    import json
    from collections import Counter
    from pathlib import Path

    where = f"--mtp-vocab-file {path}"
    check_file(path)
    file = Path(path).expanduser()
    suffix = file.suffix.lower()
    try:
        if suffix in (".pt", ".pth"):
            found: object = torch.load(file, map_location="cpu", weights_only=True)
            found = found.tolist() if isinstance(found, torch.Tensor) else found
        elif suffix == ".json":
            found = json.loads(file.read_text(encoding="utf-8"))
        else:
            text = file.read_text(encoding="utf-8")
            counts = Counter(int(i) for i in tokenizer.encode(text, add_special_tokens=False))
            found = sorted(counts, key=lambda i: (-counts[i], i))
    except (OSError, ValueError, RuntimeError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidParameter(f"{where}: cannot read it ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(found, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in found):
        raise InvalidParameter(f"{where}: not a list of token ids (a .pt tensor or a .json list, most frequent first)")
    if not found:
        raise InvalidParameter(f"{where}: holds no tokens")
    bad = next((i for i in found if not 0 <= i < width), None)
    if bad is not None:
        raise InvalidParameter(f"{where}: token id {bad} is outside the target's vocabulary of {width:,} "
                               "(a list for another tokenizer?)")
    return tuple(dict.fromkeys(found))


_RANKINGS: dict[tuple[Any, ...], tuple[int, ...]] = {}


def ranking_of(path: str, tokenizer: PreTrainedTokenizerBase, width: int) -> tuple[int, ...]:
    """`read_ranking`, read once per file (as it is now on disk) and tokenizer: every session reuses it."""
    from pathlib import Path

    st = Path(path).expanduser().stat() if Path(path).expanduser().is_file() else None
    key = (str(path), st and st.st_mtime_ns, st and st.st_size, id(tokenizer), width)
    if key not in _RANKINGS:
        _RANKINGS[key] = read_ranking(path, tokenizer, width)
    return _RANKINGS[key]


def check_file(path: str) -> None:
    """At load, before the first session: a `--mtp-vocab-file` that is not there is one line."""
    from pathlib import Path

    file = Path(path).expanduser()
    if not file.is_file():
        raise InvalidParameter(f"--mtp-vocab-file {path}: " + ("no such file" if not file.exists() else "not a file"))


def ranked_subset(n: int, width: int, first: Iterable[int] = ()) -> torch.Tensor:
    """S, in id order: the ids in `first` (those under `width`), then the lowest other ids, n in all."""
    head = [i for i in dict.fromkeys(first) if i < width][:n]
    taken = set(head)
    rest: list[int] = []
    i = 0
    while len(head) + len(rest) < n:
        if i not in taken:
            rest.append(i)
        i += 1
    return torch.tensor(sorted(head + rest), dtype=torch.long)


class DraftVocab:
    """S and the unembedding's rows of S, sliced once; `law` is q over the target's vocabulary."""

    def __init__(self, model: MtpModel, ids: torch.Tensor):
        head = model.shared_head
        dev = head.weight.device
        self.width = vocab_width(model)
        self.size = int(ids.numel())
        self.ids = ids.to(dev)
        with torch.inference_mode():
            self.weight = head.weight.index_select(0, self.ids).contiguous()
            bias = getattr(head, "bias", None)
            self.bias = bias.index_select(0, self.ids).contiguous() if bias is not None else None
        self.multiplier = getattr(model.config, "logits_mup_width_multiplier", None)

    @torch.inference_mode()
    def logits(self, out: torch.Tensor) -> torch.Tensor:
        """The head's logits over S only (|S|,), as `MtpModel._project_to_logits` computes them over V."""
        h = out.view(-1).to(self.weight.dtype)
        if self.multiplier is not None:
            h = h / self.multiplier
        return torch.nn.functional.linear(h, self.weight, self.bias).float()

    def law(self, out: torch.Tensor, served: Served) -> torch.Tensor:
        """q (V,): the softmax over S (the served one when sampling) at S's ids, zero elsewhere. Top-k and top-p
        over S are the same as over V with −∞ outside S."""
        logits = self.logits(out)
        probs = torch.softmax(logits, dim=-1) if served.greedy else served.probs(logits.unsqueeze(0))[0]
        full = torch.zeros(self.width, device=probs.device, dtype=probs.dtype)
        return full.index_copy_(0, self.ids.to(probs.device), probs)


__all__ = ["DraftVocab", "check_file", "check_size", "ranking_of", "ranked_subset", "read_ranking", "special_ids", "vocab_width"]
