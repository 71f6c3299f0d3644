"""Token ids → display text, so that the shown pieces always add up to the decoded text.

Decoding one token at a time breaks multi-byte characters and drops the
spaces some tokenizers add between tokens; these helpers decode growing
prefixes instead and hand out only the new tail.

The ids that end a turn (end_of_turn.py: `<|im_end|>`, EOS) are never
text: they get an empty piece and are left out of the decoded answer, so no
stdout, transcript, pane, export or recorded piece shows them, and a chat
history rebuilt from the answer's text gets exactly one end-of-turn from
the chat template. Their ids stay in the events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Sequence, cast

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


def _decoder(tokenizer: PreTrainedTokenizerBase) -> Callable[[list[int]], str]:
    """The tokenizer's `decode` as these helpers call it: one list of ids gives one string (transformers types
    it for a batch of lists too)."""
    return cast("Callable[[list[int]], str]", tokenizer.decode)


def answer_text(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int], hidden: Collection[int] = ()) -> str:
    """The decoded answer without the ids in `hidden` (the turn's end): what the user reads."""
    decode = _decoder(tokenizer)
    return decode([i for i in ids if i not in hidden]) if hidden else decode(list(ids))


class TextPieces:
    """Incremental detokenisation whose pieces concatenate to `decode(all ids)` exactly.

    A piece is `decode(ids[:k])[len(previous text):]`. While the decoded text
    ends in U+FFFD (a multi-byte character cut in the middle) the piece is held
    back and handed out with the token that completes the character.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, hidden: Collection[int] = ()):
        self._decode = _decoder(tokenizer)
        self.hidden = frozenset(hidden)
        self.ids: list[int] = []
        self.text = ""

    def push(self, token_id: int) -> str:
        if token_id in self.hidden:
            return ""
        self.ids.append(token_id)
        full = self._decode(self.ids)
        if full.endswith("\ufffd"):
            return ""
        # A tokenizer that rewrites earlier text (clean-up of spaces) cannot take
        # back what was shown; the piece is then the tail beyond the old length.
        piece = full[len(self.text):]
        self.text = full
        return piece

    def flush(self) -> str:
        """The held-back rest (only at the very end of a session)."""
        full = self._decode(self.ids)
        piece = full[len(self.text):]
        self.text = full
        return piece


class SingleTokenText:
    """One token's own text (for the drafted list), decoded once per id: drafts repeat a lot."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, hidden: Collection[int] = ()):
        self._decode = _decoder(tokenizer)
        self._cache: dict[int, str] = {i: "" for i in hidden}

    def __call__(self, token_id: int) -> str:
        text = self._cache.get(token_id)
        if text is None:
            text = self._cache[token_id] = self._decode([token_id])
        return text


def prompt_pieces(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int]) -> list[str]:
    """Display pieces of the prompt tokens; a small decode window keeps long prompts cheap."""
    out: list[str] = []
    window = 8
    for k in range(len(ids)):
        s = max(0, k - window)
        before = cast(str, tokenizer.decode(list(ids[s:k]))) if k > s else ""
        out.append(cast(str, tokenizer.decode(list(ids[s:k + 1])))[len(before):])
    return out


__all__ = ["TextPieces", "SingleTokenText", "prompt_pieces", "answer_text"]
