"""Where a command's prompt comes from: the argument, `-` or a piped stdin, `--prompt-file`, or the demo set.

`gammatune run - < prompt.txt`, `cat prompt.txt | gammatune run` and
`gammatune run --prompt-file prompt.txt` all read the prompt from the text;
a stdin that is a terminal is never read (a user at a shell prompt would
otherwise sit in front of a command waiting for input it never asked for),
and neither is one that is not a pipe or a file (/dev/null, a socket), so a
script or a test runner that leaves stdin alone gets the usual demo prompt.

A prompt must be UTF-8 text: bytes that are not (an argument typed as
`$'\\xff'`, a binary file) are refused with one line naming the first bad
byte, rather than decoded with replacement characters the model would then
be asked to continue. A prompt is what the user
means the model to read, and a guess at it is worse than a clear refusal.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import IO, Any

import typer

from ..errors import InvalidParameter, PromptFileError, read_user_file

STDIN = "-"
MAX_PROMPT_BYTES = 16 * 1024 * 1024


def _prompt_file(value: str) -> Path:
    """An empty --prompt-file is called empty (typer's Path turned "" into ".", "a directory")."""
    if not str(value).strip():
        raise typer.BadParameter("the file name is empty; give a text file, or - for stdin")
    return Path(value)


def input_file(value: str) -> Path:
    """The `parser=` of a flag naming a file to read (--server-log): an empty value is called empty, not "."."""
    if not str(value).strip():
        raise typer.BadParameter("the file name is empty; give a file")
    return Path(value)


def prompt_file_option(panel: str | None = None, *, takes_prompt: bool = True) -> Any:
    """`--prompt-file FILE` as every command that takes a prompt declares it.

    `takes_prompt=False` for a command without a PROMPT argument (bench, whose
    prompts are a set): its help must not offer `PROMPT -` or a piped stdin.
    """
    also = " Also: PROMPT -, or a piped stdin." if takes_prompt else " The run then uses this one prompt as its set."
    return typer.Option(None, "--prompt-file", "-f", metavar="FILE", parser=_prompt_file,
                        help="Read the prompt from FILE (UTF-8 text; - = stdin)." + also,
                        rich_help_panel=panel)


def system_option(panel: str | None = None) -> Any:
    """`--system TEXT` as chat, run and compare declare it (session/system_prompt.py says what it does)."""
    return typer.Option(None, "--system", metavar="TEXT",
                        help="A system prompt sent before the conversation, through the model's chat template. "
                             "A pair without one (the demo pair completes code) leaves it out and says so; "
                             "refused with --raw. In the chat, /system TEXT changes it.",
                        rich_help_panel=panel)


def stdin_is_piped(stream: IO[Any] | None = None) -> bool:
    """Whether stdin is a pipe or a redirected file (not a terminal, not /dev/null, not closed)."""
    stream = sys.stdin if stream is None else stream
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return False
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _decode(data: bytes, where: str) -> str:
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptFileError(f"{where}: the prompt is over {MAX_PROMPT_BYTES // (1024 * 1024)} MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PromptFileError(f"{where}: the prompt is not UTF-8 text (byte 0x{data[exc.start]:02x} on line "
                              f"{line}); give a UTF-8 text prompt") from None
    if "\0" in text:
        raise PromptFileError(f"{where}: the prompt holds NUL bytes (a binary file?); give a UTF-8 text prompt")
    return text.removeprefix("\ufeff")


def read_stdin(stream: IO[Any] | None = None) -> str:
    """All of stdin as the prompt, strictly UTF-8 (a terminal is refused: it would wait for typing)."""
    stream = sys.stdin if stream is None else stream
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if terminal:
        raise InvalidParameter("the prompt is `-` (stdin), but stdin is a terminal: pipe the prompt in "
                               "(… | gammatune run -) or use --prompt-file FILE")
    buffer = getattr(stream, "buffer", None)
    try:
        data = buffer.read() if buffer is not None else stream.read()
    except OSError as exc:
        raise PromptFileError(f"stdin: cannot read the prompt ({exc.strerror or exc})") from None
    if isinstance(data, str):   # a text stream without a buffer (tests)
        data = data.encode("utf-8", "surrogateescape")
    return _decode(data, "stdin")


def read_prompt_file(path: Path | str) -> str:
    if str(path) == STDIN:
        return read_stdin()
    p = Path(path)
    data = read_user_file(p, PromptFileError, f"--prompt-file {p}", "no such file", "a text file")
    return _decode(data, str(p))


def check_text(prompt: str, where: str = "the prompt") -> str:
    """A prompt from the command line: Python keeps bytes that are not UTF-8 as lone surrogates; refuse them."""
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = prompt[exc.start]
        code = ord(bad)
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"character U+{code:04X}"
        raise InvalidParameter(f"{where} is not valid UTF-8 text ({byte} at character {exc.start + 1}); "
                               "give a UTF-8 prompt, or --prompt-file FILE") from None
    return prompt


def given_prompt(argument: str | None, prompt_file: Path | str | None,
                 stdin: IO[Any] | None = None) -> str | None:
    """The prompt the user gave (argument, `-`, --prompt-file, a piped stdin), or None when they gave none.

    Only when there is no argument and no --prompt-file is a piped stdin read.
Text read from stdin or a file loses its final newline(s), as with `run "$(cat FILE)"`.
    """
    if argument is not None and prompt_file is not None:
        raise InvalidParameter("give the prompt either as an argument or with --prompt-file, not both")
    if prompt_file is not None:
        text = read_prompt_file(prompt_file)
    elif argument == STDIN:
        text = read_stdin(stdin)
    elif argument is not None:
        return check_text(argument)
    elif stdin_is_piped(stdin):
        text = read_stdin(stdin)
    else:
        return None
    if not text.strip():
        source = "stdin" if prompt_file in (None, STDIN) else f"--prompt-file {prompt_file}"
        raise InvalidParameter(f"the prompt read from {source} is empty")
    return text.rstrip("\r\n")   # as `run "$(cat FILE)"` would pass it: without the final newline(s)
