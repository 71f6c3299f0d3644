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

import errno
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import typer

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


def output_file(value: str) -> Path:
    """The `parser=` of every file-naming output flag: an empty value is called empty.

    Typer's own Path type turns "" into "." and then says "file '' is a
    directory", which sends the user looking for a directory that is not there.
    Directories and unwritable places are refused later by `check_output`.
    """
    if not str(value).strip():
        raise typer.BadParameter("the file name is empty; give a file name")
    return Path(value)


def _probe(path: Path, shown: str, what: str) -> None:
    """Opens the file for writing and closes it again: what the work will do at the end, done first.

    The checks above read permissions, but a folder can say "writable" and
    still refuse a new file (/proc, a read-only mount, a full disk's quota);
    only an open proves it. A new file is removed again at once, an existing
    one is opened to append nothing, so its content and time stay as they were.
    """
    if path.exists() and not path.is_file():
        return   # /dev/null or a pipe: opening a FIFO here would wait for its reader
    existed = path.exists()
    try:
        if existed:
            with open(path, "ab"):
                pass
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            os.unlink(path)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.errno in (errno.EACCES, errno.EPERM):
            reason = "permission denied"
        raise InvalidParameter(f"{shown}: cannot write the {what} there ({reason.lower()}); "
                               "give another path") from None


def check_output(path: Path, flag: str, inputs: Iterable[tuple[str, Optional[Path]]] = ()) -> bool:
    """Refuses, as one line, an output path that cannot be written or that is one of `inputs` (flag, path).

    Returns whether a regular file is already there (it will be replaced).
    Nothing is left behind: the file is opened for writing and, when it is
    new, removed again, so a refused run leaves no empty file or folder.
    """
    if not str(path).strip():
        raise InvalidParameter(f"{flag}: the file name is empty; give a file name")
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
        _probe(path, shown, what)
        return path.is_file() and path.stat().st_size > 0
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameter(f"{shown}: cannot create files in {parent} (permission denied)")
    _probe(path, shown, what)
    return False


def check_output_dir(path: Path, flag: str) -> None:
    """A folder files will be written into later (F2/F3 exports): it is, or can be made, and takes a new file.

    Nothing is created: when the folder is missing, its nearest existing
    ancestor is the one proven writable (the app makes the rest on the
    first export).
    """
    if not str(path).strip():
        raise InvalidParameter(f"{flag}: the folder name is empty; give a folder")
    path = Path(path).expanduser()
    probe_in = path
    while not probe_in.exists():
        if probe_in.parent == probe_in:
            break
        probe_in = probe_in.parent
    if not probe_in.is_dir():
        raise InvalidParameter(f"{flag} {path}: {probe_in} is a file, not a folder; give a folder")
    name = probe_in / f".gammatune-probe-{os.getpid()}"
    _probe(name, f"{flag} {path}", "files")


def check_outputs(outputs: Iterable[tuple[str, Path]], inputs: Iterable[tuple[str, Optional[Path]]] = (),
                  note: Callable[[str], None] | None = None) -> None:
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
