"""The live decoder in a child process: `LiveSource`'s transport when it loads the models itself.

The child loads the pair and runs turns with the same `load_decoder` and
`run_turn` (`turns.py`) as the in-thread decoder; only the transport differs. Events come
back over a pipe (one pickled event per step); requests, the pace and stop
go the other way and are applied between steps (also while the child waits
out a pace, so a stop or a faster pace acts at once). Nothing the child prints can reach the
UI's screen: its stdout and stderr go to /dev/null and errors travel through
the pipe.
"""

from __future__ import annotations

import multiprocessing
import threading
from typing import TYPE_CHECKING, Any, Iterator, TextIO

from ..engine.events import Event
from ..engine.policies import PolicySettings
from ..engine.common.sampling import SamplingConfig
from ..errors import GammatuneError, ModelLoadError
from .hindsight import Hindsight, HindsightHook, run_hook
from .pace import StepPacer
from .source import Notice, Progress, SourceItem
from .plain_speed import PlainSpeed
from .system_prompt import system_unreadable
from .turns import (Messages, drain, load_decoder, pair_title, plain_after_turn, plain_at_load, run_turn,
                    switch_drafter)

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess


class DecoderProcess:
    """The parent's end: start the child, stream a turn's events, pass requests and stop."""

    def __init__(self, load_kwargs: dict[str, Any], pace: float = 0.0, hindsight: HindsightHook | None = None) -> None:
        self.load_kwargs = load_kwargs
        self.pace = pace
        self.hook = hindsight              # runs in the child, after each turn; its answer comes back
        self.hindsight: Hindsight | None = None
        self.plain: PlainSpeed | None = None   # plain target decoding, timed in the child
        self.system_note = ""                  # why the pair reads no system prompt ('' = it does)
        self._proc: BaseProcess | None = None
        self._cmd: Connection | None = None    # parent's end of the command pipe
        self._ev: Connection | None = None     # parent's end of the event pipe (both set at prepare)
        self._send_lock = threading.Lock()
        _ensure_resource_tracker()

    def prepare(self, settings: PolicySettings, sampling: SamplingConfig, progress: Progress) -> str:
        ctx = multiprocessing.get_context("spawn")   # fork is unsafe once torch has threads
        cmd_child, self._cmd = ctx.Pipe(duplex=False)
        self._ev, ev_child = ctx.Pipe(duplex=False)
        progress("starting the model process", 0.0)
        _ensure_resource_tracker()
        self._proc = ctx.Process(target=_serve, name="gammatune-decoder", daemon=True,
                                 args=(cmd_child, ev_child, self.load_kwargs, settings, sampling, self.pace,
                                       self.hook))
        self._proc.start()
        cmd_child.close()
        ev_child.close()
        while True:
            msg = self._recv()
            if msg[0] == "progress":
                progress(msg[1], msg[2])
            elif msg[0] == "ready":
                self.plain, self.system_note = msg[2], msg[3]
                return msg[1]
            elif msg[0] == "error":
                self.close()
                raise (GammatuneError if msg[2] else ModelLoadError)(msg[1])

    def turn(self, messages: Messages, raw: bool, max_new_tokens: int, user_text: str,
             turn: int, note_system: bool = True) -> Iterator[SourceItem]:
        if self._proc is None:
            raise GammatuneError("the models are not loaded yet")
        self._send(("generate", messages, raw, max_new_tokens, user_text, turn, note_system))
        self.hindsight = None
        done = False
        try:
            while True:
                msg = self._recv()
                if msg[0] == "event":
                    yield msg[1]
                elif msg[0] == "hindsight":
                    self.hindsight = msg[1]
                elif msg[0] == "plain":
                    self.plain = msg[1]
                elif msg[0] == "done":
                    done = True
                    break
                elif msg[0] == "error":
                    done = True
                    self._drain_until_done()
                    raise GammatuneError(msg[1])
        finally:
            if not done:   # the consumer left early: end the turn in the child too
                self._send(("stop",))
                self._drain_until_done()

    def request(self, settings: PolicySettings | None, sampling: SamplingConfig | None) -> None:
        self._send(("request", settings, sampling))

    def stop(self) -> None:
        self._send(("stop",))

    def set_pace(self, steps_per_s: float) -> None:
        self.pace = steps_per_s
        self._send(("pace", steps_per_s))

    def set_drafter(self, name: str, settings: PolicySettings, sampling: SamplingConfig) -> None:
        self._send(("drafter", name, settings, sampling))

    def close(self) -> None:
        """End the child process (if any)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._send(("quit",))
        proc.join(timeout=3)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=3)

    # -- the pipes -----------------------------------------------------------------------
    def _send(self, msg: tuple) -> None:
        if self._cmd is None:
            return
        with self._send_lock:
            try:
                self._cmd.send(msg)
            except (OSError, EOFError, BrokenPipeError):
                pass

    def _recv(self) -> tuple:
        assert self._ev is not None, "the pipes are opened at prepare"
        try:
            return self._ev.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            raise GammatuneError(f"the model process ended unexpectedly (exit code {code})") from None

    def _drain_until_done(self, timeout: float = 10.0) -> None:
        assert self._ev is not None, "the pipes are opened at prepare"
        try:
            while self._ev.poll(timeout):
                if self._ev.recv()[0] == "done":
                    return
        except (EOFError, OSError):
            return


def _ensure_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with a real stderr.

    The tracker is started on the first spawn and hands it `sys.stderr.fileno()`;
    inside a running Textual app sys.stderr is a capture object without a real
    file descriptor, and the spawn fails ("bad value(s) in fds_to_keep").
    """
    import sys
    from multiprocessing import resource_tracker

    def usable(stream: TextIO | None) -> bool:
        try:
            return stream is not None and stream.fileno() >= 0
        except Exception:
            return False

    saved = sys.stderr
    try:
        if not usable(sys.stderr) and usable(sys.__stderr__):
            sys.stderr = sys.__stderr__
        resource_tracker.ensure_running()
    except Exception:  # the spawn reports its own error if this really matters
        pass
    finally:
        sys.stderr = saved


def _serve(cmd: Connection, out: Connection, load_kwargs: dict[str, Any], settings: PolicySettings,
           sampling: SamplingConfig, pace: float = 0.0, hook: HindsightHook | None = None) -> None:
    """The child: load the pair, then run turns on request, one event per message."""
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl+C belongs to the UI
    # Nothing from this process may write over the UI's screen: errors travel through the pipe.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")

    def fail(exc: BaseException) -> None:
        user = isinstance(exc, GammatuneError)
        out.send(("error", str(exc) if user else f"{type(exc).__name__}: {exc}", user and
                  not isinstance(exc, ModelLoadError)))

    try:
        progress = lambda stage, frac: out.send(("progress", stage, frac))   # noqa: E731
        pair, decoder = load_decoder(load_kwargs, settings, sampling, progress)
        plain = plain_at_load(pair, sampling, progress)
    except Exception as exc:
        fail(exc)
        return
    out.send(("ready", pair_title(pair), plain, system_unreadable(pair)))
    pacer = StepPacer(pace)
    quitting = False
    switch: list[tuple[str, PolicySettings, SamplingConfig]] = []   # a drafter switch asked for, applied as the next turn starts

    def control(msg: tuple) -> bool:
        nonlocal quitting
        if msg[0] == "request":
            decoder.request(settings=msg[1], sampling=msg[2])
        elif msg[0] == "pace":
            pacer.set(msg[1])
        elif msg[0] == "drafter":
            switch[:] = [msg[1:]]
        elif msg[0] == "stop":
            decoder.stop()
            pacer.interrupt()
        elif msg[0] == "quit":
            quitting = True
            decoder.stop()
            pacer.interrupt()
            return False
        return True

    def idle(seconds: float) -> None:
        """While a pace holds the decoder: read the commands (a stop or a new pace acts at once)."""
        try:
            if not quitting and cmd.poll(seconds):
                control(cmd.recv())
        except (EOFError, OSError):
            control(("quit",))

    while True:
        try:
            msg = cmd.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "generate":
            if not control(msg):
                return
            continue
        _, messages, raw, max_new, user_text, turn, note_system = msg
        try:
            if switch:
                decoder = drain(switch_drafter(pair, *switch.pop()), lambda note: out.send(("event", note))) or decoder
            events: list[Event] = []
            for ev in run_turn(pair, decoder, messages, raw, max_new, user_text, turn, pacer, idle, note_system):
                out.send(("event", ev))
                if not isinstance(ev, Notice):
                    events.append(ev)
                while not quitting and cmd.poll():
                    control(cmd.recv())
                if quitting:
                    return
            if hook is not None:   # after the turn's last event: never inside its timed loop
                out.send(("hindsight", run_hook(hook, pair, events)))
            plain = plain_after_turn(pair, decoder, plain, turn)
            out.send(("plain", plain))
        except Exception as exc:
            fail(exc)
        out.send(("done",))
