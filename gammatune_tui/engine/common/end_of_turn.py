"""Which token ids end an answer: every EOS the model and its tokenizer name, and the chat formats' end-of-turn.

An instruct model ends its turn with a token of its chat format (ChatML's
`<|im_end|>`, Llama 3's `<|eot_id|>`, …) that may or may not be the one its
`generation_config.eos_token_id` names, which may itself be a list. A
session that stopped at only one of them would run on into a made-up next
turn. So generation stops at all of them, and none of them is ever shown as
text (text_pieces.py hides them; the ids stay in the events).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# End-of-turn / end-of-text tokens of common chat formats; an id is used only where the tokenizer
# knows the string as one of its special tokens (never an ordinary piece of text that looks alike).
END_OF_TURN_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                      "<|eom_id|>")


def _ints(value: object) -> set[int]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, (list, tuple, set, frozenset)):
        return {int(i) for i in value if isinstance(i, int) and not isinstance(i, bool)}
    return set()


def special_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, int]:
    """The tokenizer's special tokens as {string: id} (added tokens marked special, and the named ones)."""
    out: dict[str, int] = {}
    decoder = getattr(tokenizer, "added_tokens_decoder", None)
    if isinstance(decoder, dict):
        for i, tok in decoder.items():
            if getattr(tok, "special", False):
                out[str(getattr(tok, "content", tok))] = int(i)
    names = getattr(tokenizer, "all_special_tokens", None) or []
    ids = getattr(tokenizer, "all_special_ids", None) or []
    for s, i in zip(names, ids):
        if isinstance(i, int):
            out.setdefault(str(s), i)
    return out


def collect_eos_ids(tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel) -> frozenset[int]:
    """Every id that ends a generation: the tokenizer's EOS, the generation config's (one or a list), the
    model config's, and the chat formats' end-of-turn tokens the tokenizer has as special tokens."""
    found: set[int] = set()
    found |= _ints(getattr(tokenizer, "eos_token_id", None))
    found |= _ints(getattr(getattr(model, "generation_config", None), "eos_token_id", None))
    found |= _ints(getattr(getattr(model, "config", None), "eos_token_id", None))
    specials = special_token_ids(tokenizer)
    found |= {specials[s] for s in END_OF_TURN_TOKENS if s in specials}
    return frozenset(found)


__all__ = ["END_OF_TURN_TOKENS", "collect_eos_ids", "special_token_ids"]
