"""Why a session stopped, in words: a summary's `stop_reason` is a key ("eos", "stopped"), not a sentence.

Printed as it was, `replay --print` read "stopped: stopped" and "stopped: eos";
every place that shows the reason takes its words from here.
"""

from __future__ import annotations

STOP_WORDS = {
    "eos": "the model ended its answer",
    "max_new_tokens": "reached the token limit",
    "stopped": "stopped by you",
    "error": "ended by an error",
}


def stop_words(reason: str | None) -> str:
    """The reason in words; a reason this version does not know (a newer recording) as it was written."""
    if not reason:
        return "cut off (no summary)"
    return STOP_WORDS.get(reason, f"stopped: {reason}")


__all__ = ["STOP_WORDS", "stop_words"]
