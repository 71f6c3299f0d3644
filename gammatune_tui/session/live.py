"""The live event source: real models, one decoder, a multi-turn conversation.

`prepare()` loads the pair (reporting stage and fraction) and builds the
`SpeculativeDecoder`; `events(prompt)` adds the prompt to the conversation,
runs one turn through the decoder with the whole history (the pair formats it
with its chat template) and adds the reply to the history when the turn ends.
`request()` and `stop()` reach the decoder, which acts at the next step boundary.

Where the decoder runs: given `load_kwargs`, in a child process by default
(`process=True`). Small models spend most of a step in Python, so a decoder
thread would share the interpreter lock with the UI's drawing and lose a
third of its speed; in its own process it runs as fast as `gammatune run`.
Events come back over a pipe (one pickled event per step); requests and stop
go the other way and are applied between steps. Given an already loaded
`pair` (tests, notebooks), the decoder runs in the calling thread.

No Textual here: the UI runs `events()` in a worker thread.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
from typing import Any, Iterator

from ..engine.events import Event, SessionHeader, SessionSummary, StepEvent
from ..engine.policies import PolicySettings
from ..engine.sampling import SamplingConfig
from ..errors import GammatuneError, ModelLoadError
from .source import Progress


class LiveSource:
    """EventSource over a model pair.

    Either pass `pair` (an already loaded ModelPair) or `load_kwargs` for
    `load_pair(**load_kwargs)`; `raw=True` sends the conversation as plain
    concatenated text instead of through the chat template.
    """

    read_only = False

    def __init__(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None, *,
                 pair: Any = None, load_kwargs: dict[str, Any] | None = None, max_new_tokens: int = 256,
                 raw: bool = False, title: str | None = None, process: bool = True) -> None:
        self.settings = settings or PolicySettings()
        self.sampling = sampling or SamplingConfig()
        self.pair = pair
        self.load_kwargs = dict(load_kwargs or {})
        self.max_new_tokens = max_new_tokens
        self.raw = raw
        self.decoder: Any = None
        self.messages: list[dict[str, str]] = []
        self.turn = 0
        self.title = title or self._default_title()
        self.process = process and pair is None
        self._proc: Any = None
        self._cmd: Any = None      # parent's end of the command pipe
        self._ev: Any = None       # parent's end of the event pipe
        self._send_lock = threading.Lock()
        if self.process:
            _ensure_resource_tracker()

    def _default_title(self) -> str:
        if self.pair is not None:
            return f"{getattr(self.pair, 'name_target', 'target')} + {getattr(self.pair, 'name_draft', 'draft')}"
        kw = self.load_kwargs
        if kw.get("pair"):
            return f"pair {kw['pair']}"
        if kw.get("target") or kw.get("draft"):
            return f"{kw.get('target')} + {kw.get('draft')}"
        return "demo pair"

    # -- EventSource -------------------------------------------------------------------
    def prepare(self, progress: Progress) -> None:
        if self.process:
            return self._start_process(progress)
        from ..engine import SpeculativeDecoder, load_pair

        if self.pair is None:
            self.pair = load_pair(**self.load_kwargs, progress=progress)
            self.title = self._default_title()
        else:
            progress("ready", 1.0)
        self.decoder = SpeculativeDecoder(self.pair, self.settings, self.sampling)

    def events(self, prompt: str | None) -> Iterator[Event]:
        if prompt is None:
            return
        if self.process:
            yield from self._events_from_process(prompt)
            return
        if self.decoder is None:
            raise GammatuneError("the models are not loaded yet")
        messages = [*self.messages, {"role": "user", "content": prompt}]
        ids = self.pair.encode_prompt(messages, raw=self.raw)
        turn = self.turn
        pieces: list[str] = []
        summary: SessionSummary | None = None
        gen = self.decoder.generate(ids, self.max_new_tokens, user_text=prompt, turn=turn)
        self.turn += 1
        for ev in gen:
            if isinstance(ev, StepEvent):
                pieces.extend(t.text for t in ev.emitted)
            elif isinstance(ev, SessionSummary):
                summary = ev
            elif isinstance(ev, SessionHeader) and (ev.user_text != prompt or ev.turn != turn):
                ev = dataclasses.replace(ev, user_text=prompt, turn=turn)
            yield ev
        reply = summary.text if summary is not None and summary.text else "".join(pieces)
        self.messages = [*messages, {"role": "assistant", "content": reply}]

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        if settings is not None:
            self.settings = settings
        if sampling is not None:
            self.sampling = sampling
        if self.process:
            self._send(("request", settings, sampling))
        elif self.decoder is not None:
            self.decoder.request(settings=settings, sampling=sampling)

    def stop(self) -> None:
        if self.process:
            self._send(("stop",))
        elif self.decoder is not None:
            self.decoder.stop()

    def reset(self) -> None:
        """Forget the conversation (the next prompt starts a fresh one)."""
        self.messages = []
        self.turn = 0

    def close(self) -> None:
        """End the decoder process (if any)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._send(("quit",))
        proc.join(timeout=3)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=3)

    # -- the decoder process ---------------------------------------------------------------
    def _send(self, msg: tuple) -> None:
        if self._cmd is None:
            return
        with self._send_lock:
            try:
                self._cmd.send(msg)
            except (OSError, EOFError, BrokenPipeError):
                pass

    def _recv(self) -> tuple:
        try:
            return self._ev.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            raise GammatuneError(f"the model process ended unexpectedly (exit code {code})") from None

    def _start_process(self, progress: Progress) -> None:
        ctx = multiprocessing.get_context("spawn")   # fork is unsafe once torch has threads
        cmd_child, self._cmd = ctx.Pipe(duplex=False)
        self._ev, ev_child = ctx.Pipe(duplex=False)
        progress("starting the model process", 0.0)
        _ensure_resource_tracker()
        self._proc = ctx.Process(target=_serve, name="gammatune-decoder", daemon=True,
                                 args=(cmd_child, ev_child, self.load_kwargs, self.settings, self.sampling))
        self._proc.start()
        cmd_child.close()
        ev_child.close()
        while True:
            msg = self._recv()
            if msg[0] == "progress":
                progress(msg[1], msg[2])
            elif msg[0] == "ready":
                self.title = msg[1] or self.title
                return
            elif msg[0] == "error":
                self.close()
                raise (GammatuneError if msg[2] else ModelLoadError)(msg[1])

    def _events_from_process(self, prompt: str) -> Iterator[Event]:
        if self._proc is None:
            raise GammatuneError("the models are not loaded yet")
        messages = [*self.messages, {"role": "user", "content": prompt}]
        turn = self.turn
        self.turn += 1
        self._send(("generate", messages, self.raw, self.max_new_tokens, prompt, turn))
        pieces: list[str] = []
        summary: SessionSummary | None = None
        done = False
        try:
            while True:
                msg = self._recv()
                if msg[0] == "event":
                    ev = msg[1]
                    if isinstance(ev, StepEvent):
                        pieces.extend(t.text for t in ev.emitted)
                    elif isinstance(ev, SessionSummary):
                        summary = ev
                    yield ev
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
        reply = summary.text if summary is not None and summary.text else "".join(pieces)
        self.messages = [*messages, {"role": "assistant", "content": reply}]

    def _drain_until_done(self, timeout: float = 10.0) -> None:
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

    def usable(stream: Any) -> bool:
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


def _serve(cmd: Any, out: Any, load_kwargs: dict[str, Any], settings: PolicySettings,
           sampling: SamplingConfig) -> None:
    """The decoder process: load the pair, then run turns on request, one event per message."""
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl+C belongs to the UI
    # Nothing from this process may write over the UI's screen: errors travel through the pipe.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    from ..engine import SpeculativeDecoder, load_pair

    def fail(exc: BaseException) -> None:
        user = isinstance(exc, GammatuneError)
        out.send(("error", str(exc) if user else f"{type(exc).__name__}: {exc}", user and
                  not isinstance(exc, ModelLoadError)))

    try:
        pair = load_pair(**load_kwargs, progress=lambda stage, frac: out.send(("progress", stage, frac)))
        decoder = SpeculativeDecoder(pair, settings, sampling)
    except Exception as exc:
        fail(exc)
        return
    out.send(("ready", f"{pair.name_target} + {pair.name_draft}" if not pair.is_demo else "demo pair"))

    def control(msg: tuple) -> bool:
        if msg[0] == "request":
            decoder.request(settings=msg[1], sampling=msg[2])
        elif msg[0] == "stop":
            decoder.stop()
        elif msg[0] == "quit":
            return False
        return True

    while True:
        try:
            msg = cmd.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "generate":
            if not control(msg):
                return
            continue
        _, messages, raw, max_new, user_text, turn = msg
        try:
            ids = pair.encode_prompt(messages, raw=raw)
            for ev in decoder.generate(ids, max_new, user_text=user_text, turn=turn):
                out.send(("event", ev))
                while cmd.poll():
                    if not control(cmd.recv()):
                        return
        except Exception as exc:
            fail(exc)
        out.send(("done",))
