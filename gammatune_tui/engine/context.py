"""How many tokens a model pair can hold, and whether a prompt plus its budget fits.

A model asked for positions past the ones it was trained on does not fail:
it runs on, slower and slower, while its text turns to junk (and a model
with learned position embeddings crashes). So every entry point — `run`,
`compare`, `bench`, the chat and `SpeculativeDecoder.generate` — checks the
prompt and `max_new_tokens` against the pair's context here, before any model
work, and refuses with one line that says what fits.

The context is the smaller of the target's and the draft's: the draft keeps
its own KV cache of the same text, so it must hold every position too. Each
model's limit is read from its config (`max_position_embeddings`, or the
older names `n_positions`, `max_sequence_length`, `seq_length`, `n_ctx`); the
tokenizer's `model_max_length` is used only when no config says (tokenizers
default it to a huge sentinel when unknown, and some ship a smaller value
than the model really holds).
"""

from __future__ import annotations

from dataclasses import dataclass

from .common.pair import ModelPair
from ..errors import ContextTooLong

_CONFIG_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")
_TOKENIZER_SENTINEL = 10**20   # transformers' "unknown" model_max_length is int(1e30)


@dataclass(frozen=True)
class ContextWindow:
    """The positions a pair can hold (prompt + new tokens) and where that number comes from."""

    tokens: int
    source: str   # e.g. "the target's max_position_embeddings"

    def room(self, prompt_tokens: int) -> int:
        """How many new tokens fit after a prompt of this many tokens (0 when none)."""
        return max(0, self.tokens - int(prompt_tokens))

    def fits(self, prompt_tokens: int, max_new_tokens: int) -> bool:
        return int(prompt_tokens) + int(max_new_tokens) <= self.tokens

    def check(self, prompt_tokens: int, max_new_tokens: int) -> None:
        """Raises ContextTooLong (an InvalidParameter) naming the limit and what would fit."""
        if self.fits(prompt_tokens, max_new_tokens):
            return
        room = self.room(prompt_tokens)
        limit = f"the {self.tokens:,}-token context ({self.source})"
        if room < 1:
            message = (f"the prompt is {prompt_tokens:,} tokens: it leaves no room for a new token in {limit}; "
                       f"shorten it to at most {self.tokens - 1:,} tokens")
        else:
            message = (f"a {prompt_tokens:,}-token prompt + {max_new_tokens:,} new tokens do not fit in {limit}: "
                       f"at most {room:,} new tokens fit after this prompt")
        raise ContextTooLong(message, prompt_tokens=int(prompt_tokens), max_new_tokens=int(max_new_tokens),
                             limit=self.tokens)


def check_budget(window: ContextWindow, max_new_tokens: int, flag: str = "--max-new-tokens") -> None:
    """Before a prompt is tokenized: a budget that cannot fit after even a one-token prompt is refused."""
    if max_new_tokens + 1 > window.tokens:
        raise ContextTooLong(f"{flag} {max_new_tokens:,} does not fit in the {window.tokens:,}-token context "
                             f"({window.source}): at most {window.tokens - 1:,} new tokens fit, fewer after the prompt",
                             prompt_tokens=0, max_new_tokens=int(max_new_tokens), limit=window.tokens)


def config_limit(config: object) -> tuple[int, str] | None:
    """(positions, the config key that says so) for one model's config, or None when it does not say."""
    for key in _CONFIG_KEYS:
        v = getattr(config, key, None)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v, key
    return None


def tokenizer_limit(tokenizer: object) -> int | None:
    v = getattr(tokenizer, "model_max_length", None)
    if isinstance(v, int) and not isinstance(v, bool) and 0 < v < _TOKENIZER_SENTINEL:
        return v
    return None


def window_of(target_config: object, draft_config: object = None, tokenizer: object = None) -> ContextWindow | None:
    """The pair's context from its configs (the smaller one binds), else the tokenizer's limit, else None.

    A config is a model's `PretrainedConfig` or its config.json read as attributes (loading/model_files.py
    `read_config`), None when unknown; only its attributes are read, as they are of the tokenizer."""
    found = []
    for role, cfg in (("target", target_config), ("draft", draft_config)):
        if cfg is None:
            continue
        lim = config_limit(cfg)
        if lim is not None:
            found.append(ContextWindow(lim[0], f"the {role}'s {lim[1]}"))
    if found:
        return min(found, key=lambda w: w.tokens)
    tok = tokenizer_limit(tokenizer)
    if tok is not None:
        return ContextWindow(tok, "the tokenizer's model_max_length")
    return None


def context_window(pair: ModelPair) -> ContextWindow | None:
    """The context of a loaded `ModelPair` (anything with `.target`, `.draft`, `.tokenizer`)."""
    target = pair.target
    draft = pair.draft
    return window_of(getattr(target, "config", None), getattr(draft, "config", None),
                     pair.tokenizer)


def check_context(pair: ModelPair, prompt_tokens: int, max_new_tokens: int) -> None:
    """Raises ContextTooLong when a prompt of `prompt_tokens` plus `max_new_tokens` does not fit the pair."""
    window = context_window(pair)
    if window is not None:
        window.check(prompt_tokens, max_new_tokens)


__all__ = ["ContextWindow", "check_budget", "config_limit", "tokenizer_limit", "window_of", "context_window", "check_context"]
