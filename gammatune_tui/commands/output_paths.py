"""Files a command will write, checked before the work that fills them starts, and a stdout that may close.

A bench or a doctor run can take many minutes: a results file whose folder
does not exist, or one that would overwrite the user's own prompt file, has
to be refused before that time is spent, with one line and exit status 2,
not found afterwards as a traceback. An existing file that will be replaced
is said on stderr, so nobody loses an earlier result without being told.

`StdoutUntilClosed` is the stdout of commands whose printing comes after
the work (bench's tables): when the reader goes away (`… | head -1`) the
rest of the printing is dropped, but the files `--out` asked for are still
written and the command ends normally.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

from ..errors import InvalidParameter

STDIN = "-"
_WHAT = {"--record": "recording", "--out": "results", "--json": "report", "--traces": "traces"}


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (existing or not)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: Path, flag: str, inputs: Iterable[tuple[str, Optional[Path]]] = ()) -> bool:
    """Refuses, as one line, an output path that cannot be written or that is one of `inputs` (flag, path).

    Returns whether a regular file is already there (it will be replaced).
    Nothing is created: a refused run leaves no empty file or folder behind.
    """
    path = Path(path)
    shown = f"{flag} {path}"
    what = _WHAT.get(flag, "file")
    if path.is_dir():
        raise InvalidParameter(f"{shown} is a directory; give a file name")
    for in_flag, src in inputs:
        if src is None or str(src) == STDIN:
            continue
        if same_file(path, Path(src)):
            raise InvalidParameter(f"{shown} is also the {in_flag} file it reads: writing it would destroy that "
                                   "input; give another file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise InvalidParameter(f"{shown}: cannot write the {what} there: the folder {parent} does not exist (create it first, or give another path)")
    if not parent.is_dir():
        raise InvalidParameter(f"{shown}: cannot write the {what} there: {parent} is not a folder")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise InvalidParameter(f"{shown}: cannot write this file (permission denied)")
        return path.is_file() and path.stat().st_size > 0
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameter(f"{shown}: cannot create files in {parent} (permission denied)")
    return False


def check_outputs(outputs: Iterable[tuple[str, Path]], inputs: Iterable[tuple[str, Optional[Path]]] = (),
                  note: Any = None) -> None:
    """`check_output` for each (flag, path); `note(text)` is told of each existing file that will be replaced."""
    ins = list(inputs)
    for flag, path in outputs:
        if check_output(path, flag, ins) and note is not None:
            note(f"note: {path} exists and will be replaced")


def check_json_and_csv(out: Path, csv: Path) -> None:
    """`--out` names the JSON file and the CSV goes beside it: the two must be different files."""
    if Path(out).suffix.lower() == ".csv" or same_file(Path(out), Path(csv)):
        raise InvalidParameter(f"--out {out}: --out names the JSON file and the CSV is written beside it as "
                               f"{csv}; give a name ending in .json")


def prompt_set_path(name: Optional[str]) -> Optional[Path]:
    """The file behind a --prompts value, when it names one (a shipped set's name or `-` is no file)."""
    if name is None or name == STDIN:
        return None
    p = Path(name)
    return p if p.exists() else None


class StdoutUntilClosed:
    """sys.stdout, except that a closed reader turns every later write into nothing instead of an error.

    Rich's own broken-pipe handling exits at once (status 1), before a
    bench has written its JSON and CSV; with this as its file, the bench
    goes on to write them. After the pipe closes, stdout points at the null
    device, so the flush at exit cannot fail either.
    """

    def __init__(self) -> None:
        self.closed_by_reader = False

    @property
    def _out(self) -> Any:
        return sys.stdout

    def write(self, text: str) -> int:
        if self.closed_by_reader:
            return len(text)
        try:
            return self._out.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        if self.closed_by_reader:
            return
        try:
            self._out.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        self.closed_by_reader = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass

    def isatty(self) -> bool:
        try:
            return self._out.isatty()
        except (OSError, ValueError, AttributeError):
            return False

    def fileno(self) -> int:
        return self._out.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)
