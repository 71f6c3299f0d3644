"""Errors a user can cause.

Every one of these is turned into a single line by the CLI (exit status 2) or
into a notification by the TUI; anything else reaching the top is a bug.
"""

from __future__ import annotations

import os


class GammatuneError(Exception):
    """Base of every user-facing error; its message is one line."""

    exit_code = 2


class InvalidParameter(GammatuneError, ValueError):
    """A policy, sampling or CLI value outside its range (also a ValueError, as docs/spec.md §2.1 asks)."""


class ContextTooLong(InvalidParameter):
    """A prompt plus max_new_tokens that do not fit in the model pair's context (see engine/context.py)."""

    def __init__(self, message: str, *, prompt_tokens: int = 0, max_new_tokens: int = 0, limit: int = 0):
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.limit = limit


class ModelLoadError(GammatuneError):
    """A model or tokenizer that cannot be found or read."""


class TokenizerMismatch(GammatuneError):
    """Draft and target do not share a vocabulary, so draft ids mean nothing to the target."""


class DraftUnusable(InvalidParameter):
    """A draft that cannot be built or run beside this target (a self-draft whose quantized copy does not run): the
    draft's fault, not the target's, so a tool trying several drafts (doctor) skips it and examines the rest."""


class EngineUnavailable(InvalidParameter):
    """`--engine` names a runner this pair cannot use here (graphs without CUDA, an unsupported architecture)."""


class RecordingError(GammatuneError):
    """A recording that cannot be read: unknown schema, malformed line, impossible values."""


class TraceWithoutEntropy(GammatuneError, ValueError):
    """A policy that reads the draft's entropy (adaedl, svip) asked to play a trace file recorded before
    traces kept it: playing the unknown entropy as any number would print results of a rule that never ran."""


class OutputError(GammatuneError):
    """A file the user asked for (--out, --json, --record) that cannot be written: a full disk, a lost folder."""


class PromptFileError(GammatuneError):
    """A prompt set that is missing or malformed."""


class Interrupted(GammatuneError):
    """Ctrl+C: the message says what was done and what was kept; exit 130, as for any program stopped by SIGINT."""

    exit_code = 130


def read_user_file(path: "str | os.PathLike[str]", error: type[GammatuneError], label: str, missing: str,
                   what: str) -> bytes:
    """The bytes of a file the user named, or one `error` line saying why not (missing, a directory, unreadable).

    Prompt files, prompt sets and recordings are all opened this way, so each
    failure reads the same: "LABEL: MISSING", "LABEL: is a directory, not WHAT",
    "LABEL: cannot read (reason)".
    """
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise error(f"{label}: {missing}") from None
    except IsADirectoryError:
        raise error(f"{label}: is a directory, not {what}") from None
    except OSError as exc:
        raise error(f"{label}: cannot read ({exc.strerror or exc})") from None
