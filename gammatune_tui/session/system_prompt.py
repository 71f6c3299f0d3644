"""The system prompt: what `--system TEXT` (chat, run, compare) and the chat's `/system TEXT` set.

A system message only means something to a model that reads a chat format:
its tokenizer's chat template, or the paper's Vicuna format. A model without
one completes text (the demo pair writes Python), and there is no place in
plain text where a system message could go without becoming part of the
text the model continues. So the system prompt is *left out, with a notice*
on such a pair: `gammatune run` prints one line on stderr, `compare` the
same, and the chat shows it (a notification and a line in the transcript)
at the first turn it is left out of. We chose a notice over a refusal because
whether a pair has a template is known only once its tokenizer is loaded,
and a chat that has already loaded should not end over it. The flags that
contradict each other are refused at once, before anything loads:
`--system` with `--raw` (which sends the text without the chat format).

A template that refuses a system role (some do) is treated the same: the
system prompt is left out and the notice says why.
"""

from __future__ import annotations

from typing import Sequence

from ..engine.common.pair import ModelPair
from ..errors import InvalidParameter

Messages = list[dict[str, str]]

NO_CHAT_FORMAT = ("the system prompt is left out: {name} has no chat template (it continues the text you send, "
                  "so there is no place for a system message)")
REFUSED = "the system prompt is left out: {name}'s chat template refuses a system message ({why})"
RAW = ("the system prompt is left out: --raw sends your text without the chat template, where a system "
       "message would go")


def check_system_flags(system: str | None, raw: bool) -> None:
    """`--system` with `--raw`: one line before anything loads (the two contradict each other)."""
    if system is not None and not system.strip():
        raise InvalidParameter("--system needs some text (leave the flag out for no system prompt)")
    if system and raw:
        raise InvalidParameter("--system needs the chat template, and --raw sends the prompt without it: "
                               "leave one of them out")


def with_system(system: str | None, messages: Sequence[dict[str, str]]) -> Messages:
    """The conversation with the system message first (replacing one already there); unchanged without one."""
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    return ([{"role": "system", "content": system}] if system else []) + rest


def _chat_template(pair: ModelPair) -> bool:
    """Whether the pair's tokenizer has a chat template (a tokenizer a user passes may lack the attribute)."""
    tok = pair.tokenizer
    return bool(getattr(tok, "chat_template", None))


def _pair_name(pair: ModelPair) -> str:
    if pair.is_demo:
        return "the demo pair"
    return str(pair.name_target or "this model")


def system_notice(pair: ModelPair, messages: Sequence[dict[str, str]], raw: bool = False) -> str:
    """Why the system message in `messages` cannot reach the model ('' when it can, or there is none)."""
    if not any(m.get("role") == "system" for m in messages):
        return ""
    if raw:
        return RAW
    if pair.vicuna:
        return ""
    if not _chat_template(pair):
        return NO_CHAT_FORMAT.format(name=_pair_name(pair))
    try:
        pair.encode_prompt(list(messages))
    except InvalidParameter:
        raise
    except Exception as exc:   # jinja's TemplateError: "System role not supported"
        return REFUSED.format(name=_pair_name(pair), why=str(exc).strip().rstrip(".") or type(exc).__name__)
    return ""


def system_unreadable(pair: ModelPair) -> str:
    """Why no system prompt could reach `pair` ('' when one can): known once it has loaded, so the chat's
    `/system` can say so when it is typed rather than set it and leave it out at the next turn."""
    return system_notice(pair, [{"role": "system", "content": "."}, {"role": "user", "content": "."}])


def prompt_format(pair: ModelPair, raw: bool = False) -> str:
    """What a message is wrapped in before it is counted and sent: named in the context-length error."""
    if raw:
        return ""
    if pair.vicuna:
        return "Vicuna's conversation format"
    return "the chat template" if _chat_template(pair) else ""


def fit_system(pair: ModelPair, messages: Sequence[dict[str, str]], raw: bool = False) -> tuple[Messages, str]:
    """(the messages to send, the notice): the system message kept where the pair can read it, else dropped."""
    notice = system_notice(pair, messages, raw)
    kept = [dict(m) for m in messages if not (notice and m.get("role") == "system")]
    return kept, notice


__all__ = ["check_system_flags", "fit_system", "prompt_format", "system_notice", "system_unreadable",
           "with_system"]
