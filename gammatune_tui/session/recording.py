"""Recordings: the event stream as JSON Lines (docs/spec.md §3.2), schema 2; schema 1 files are upgraded as they are read.

Writing flushes after every event so a crash leaves a replayable prefix.
Reading treats the file as untrusted: it is parsed as JSON and validated
field by field; nothing in it is executed, and errors name the file and line.
A bare name finds one of the recordings shipped with gammatune.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from ..engine.events import SCHEMA_VERSION, Event, EventFormatError, SessionHeader, SessionSummary, StepEvent, event_from_json
from ..errors import RecordingError, read_user_file
from ..resources import demo_prompts_dir
from .recording_check import SessionChecker

MAX_LINE_BYTES = 16 * 1024 * 1024


def event_line(event: Event) -> str:
    """One event as a JSON Lines line (no newline), the same for a recording and `--json` on stdout."""
    obj = event.to_json()
    line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in token text: escape it rather than lose the session
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False)
    return line


class RecordingWriter:
    """Appends events to a JSONL file, one flushed line each."""

    def __init__(self, path: str | os.PathLike, mode: str = "w"):
        self.path = Path(path)
        self.lines = 0   # written and flushed
        try:
            self._fh: IO[str] | None = open(self.path, mode, encoding="utf-8")
        except OSError as exc:
            raise RecordingError(f"cannot write recording {self.path}: {exc.strerror or exc}") from None

    def write(self, event: Event) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(event_line(event) + "\n")
            self._fh.flush()
        except OSError as exc:   # a full disk: one line; the lines flushed before stay in the file
            kept = self.lines
            self.close()
            raise RecordingError(f"cannot write recording {self.path}: {exc.strerror or exc} "
                                 f"({kept} line{'s' * (kept != 1)} written before it stay there)") from None
        self.lines += 1

    def write_all(self, events: Iterable[Event]) -> None:
        for e in events:
            self.write(e)

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError:   # its flush on a full disk: write() said so already
                pass

    def __enter__(self) -> "RecordingWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class RecordedSession:
    """One header … summary run inside a recording (a compare recording holds several)."""

    header: SessionHeader
    steps: list[StepEvent] = field(default_factory=list)
    summary: SessionSummary | None = None

    @property
    def events(self) -> list[Event]:
        out: list[Event] = [self.header, *self.steps]
        if self.summary is not None:
            out.append(self.summary)
        return out


@dataclass
class Recording:
    path: Path
    sessions: list[RecordedSession]
    warning: str = ""

    @property
    def events(self) -> list[Event]:
        return [e for s in self.sessions for e in s.events]


def iter_recording(path: str | os.PathLike) -> Iterator[tuple[int, Event | None, str]]:
    """Yields (line number, event, warning). A cut-off last line yields (n, None, warning)."""
    p = Path(path)
    lines = read_user_file(p, RecordingError, str(p), "no such recording", "a recording").split(b"\n")
    last: int | None = len(lines)
    if lines and lines[-1] == b"":
        lines.pop()
        last = None  # ends with a newline: no partial final line
    schema = SCHEMA_VERSION   # the schema of the last header: the steps and summary after it are read in it
    seen_header = False
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        is_partial_last = last is not None and n == len(lines)
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise ValueError("line too long")
            text = raw.decode("utf-8")
            obj = json.loads(text, parse_constant=_reject_constant)
        except _NonFinite as exc:
            raise RecordingError(f"{p}: line {n}: {exc}") from None
        except (UnicodeDecodeError, ValueError):
            if is_partial_last and n > 1:
                yield n, None, f"{p}: line {n} is cut off (the recording ended mid-line); replaying the {n - 1} lines before it"
                return
            report = _json_report(b"\n".join(lines)) if n == 1 else ""
            if report:
                raise RecordingError(f"{p}: {report}") from None
            what = "not UTF-8 text" if b"\0" in raw or _not_utf8(raw) else "not valid JSON"
            raise RecordingError(f"{p}: line {n}: {what} (is this a gammatune recording?)") from None
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "header":
            seen_header = True
            schema = obj.get("schema")
        elif kind in ("step", "summary") and not seen_header:
            # say the real problem, not what the orphan line lacks: a recording starts with its header
            raise RecordingError(f"{p}: line {n}: a {kind} line before any header line (a recording starts with "
                                 "the session's header; is this a cut-out piece of one?)")
        try:
            event = event_from_json(obj, schema)
        except EventFormatError as exc:
            raise RecordingError(f"{p}: line {n}: {exc}") from None
        yield n, event, ""


def _json_report(whole: bytes) -> str:
    """What a whole-file JSON document is, when a recording was expected: '' if it is none.

    `compare --json`, `doctor --json` and bench's `--out` write one indented
    JSON document, not JSON Lines; its first line alone ("{") is not JSON,
    so without this the user is told the valid file they wrote is invalid.
    """
    try:
        obj = json.loads(whole.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    if not isinstance(obj, dict):
        return "a JSON document, not a gammatune recording (JSON Lines from --record)"
    if "contestants" in obj and "lossless" in obj:
        what = "a `compare --json` report"
        fix = "to replay the race, run compare again with --record FILE and replay that file"
    else:
        cmd = obj.get("command")
        sub = cmd[1] if isinstance(cmd, list) and len(cmd) > 1 and cmd[1] in ("bench", "doctor") else ""
        what = {"bench": "a `bench --out` results file", "doctor": "a `doctor --json` report"}.get(sub, "a JSON report")
        fix = "replay reads recordings, written with --record by run, chat or compare"
    return f"{what}, not a recording: {fix}"


class _NonFinite(Exception):
    pass


def _reject_constant(name: str) -> None:
    """JSON has no NaN or Infinity; a file that holds them was not written by gammatune."""
    raise _NonFinite(f"non-finite number {name} (impossible value)")


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def read_recording(path: str | os.PathLike) -> Recording:
    """Reads and validates a whole recording into sessions, each line and the lines against each other."""
    p = Path(path)
    sessions: list[RecordedSession] = []
    warning = ""
    current: RecordedSession | None = None
    checker: SessionChecker | None = None
    for n, event, warn in iter_recording(p):
        if event is None:
            warning = warn
            break
        if isinstance(event, SessionHeader):
            current = RecordedSession(event)
            checker = SessionChecker(p)
            sessions.append(current)
        elif current is None or checker is None:
            raise RecordingError(f"{p}: line {n}: a {event.type} event before any header")
        elif current.summary is not None:
            raise RecordingError(f"{p}: line {n}: a {event.type} event after the session's summary")
        elif isinstance(event, StepEvent):
            checker.step(n, event)
            current.steps.append(event)
        else:
            checker.summary(n, event)
            current.summary = event
    if not sessions:
        raise RecordingError(f"{p}: no session in this file (empty, or no header line)")
    return Recording(p, sessions, warning)


def resolve_recording(name: str | os.PathLike) -> Path:
    """A path, or the bare name of a shipped demo recording (`all-methods`)."""
    p = Path(name)
    if p.exists():
        return p
    if not p.is_absolute() and len(p.parts) > 1 and p.parts[0] == "demo_prompts":
        # the README's `demo_prompts/recordings/x.jsonl`, run outside a checkout: the installed copy
        try:
            shipped = demo_prompts_dir().joinpath(*p.parts[1:])
        except FileNotFoundError:
            shipped = None
        if shipped is not None and shipped.is_file():
            return shipped
    s = str(name)
    if os.sep not in s and "/" not in s:
        try:
            shipped_dir = demo_prompts_dir() / "recordings"
        except FileNotFoundError:
            shipped_dir = None
        if shipped_dir is not None:
            for candidate in (shipped_dir / s, shipped_dir / f"{s}.jsonl"):
                if candidate.is_file():
                    return candidate
    return p  # read_recording names it in a one-line error


def shipped_recordings() -> list[Path]:
    """The demo recordings that come with gammatune (for help texts and errors)."""
    try:
        d = demo_prompts_dir() / "recordings"
    except FileNotFoundError:
        return []
    return sorted(d.glob("*.jsonl")) if d.is_dir() else []
