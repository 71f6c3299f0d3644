"""`gammatune run [PROMPT]`: one headless session, streamed to stdout.

On a terminal the prompt and the text are coloured as docs/spec.md §4 (prompt blue,
accepted draft tokens green, target tokens red) between the session's header
and a summary table. When stdout is not a terminal (a pipe, a file) stdout
gets the generated text alone, and the header and summary go to stderr, so
`gammatune run … > out.txt` saves just the text. `--json` writes the event
stream itself (docs/spec.md §3) and nothing else on stdout, so it can be piped into
`jq` or saved as a recording; its summary line also carries the session in vLLM's
per-request spec-decode terms (`speculative_decoding`, docs/deploy.md). Model output is untrusted text: it is shown
only through `rich.text.Text` after `printable()` has escaped control
characters.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import typer

from ..errors import Interrupted, InvalidParameter
from .options import CommonOptions, check_models, common_options, prompt_or_demo
from .output_paths import check_outputs, output_file
from .prompt_input import given_prompt, prompt_file_option, system_option

if TYPE_CHECKING:   # the events and their writer load with the session
    from ..engine.events import Event
    from ..session.recording import RecordingWriter


@common_options()
def run(
    prompt: Optional[str] = typer.Argument(
        None, metavar="PROMPT",
        help="The prompt (chat-formatted unless --raw); - or a piped stdin reads it. Omitted: the demo prompt "
             "--seed picks, named on stderr.",
    ),
    prompt_file: Optional[Path] = prompt_file_option(),
    system: Optional[str] = system_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the event stream as JSON Lines on stdout, nothing else."),
    echo: bool = typer.Option(False, "--echo", help="In a pipe too, write the prompt before the generated text (`run \"def f(x):\" --echo --raw > f.py` keeps the whole code; a terminal always shows it)."),
    record: Optional[Path] = typer.Option(
        None, "--record", help="Also write the event stream to FILE (JSON Lines, flushed every step).",
        metavar="FILE", parser=output_file,
    ),
    *,
    opts: CommonOptions,
) -> None:
    """Generate once, headless: coloured text and a summary, or the event stream with --json.

    When stdout is not a terminal it gets the generated text only; the header and summary go to stderr.
    """
    if echo and json_out:
        raise InvalidParameter("--echo writes the prompt before the text; with --json the header line already "
                               "carries it (user_text): leave --echo out")
    settings = opts.policy_settings()   # a bad γ, η, δ, τ: one line before torch is even imported
    opts.check_flags_read([settings.method])   # --eta with specdecode, --ngram-min with the draft model
    sampling = opts.sampling(demo_defaults=opts.uses_demo)   # and a bad --top-p or --temperature
    max_new = opts.max_new_tokens
    if max_new < 1:
        raise InvalidParameter(f"--max-new-tokens must be a whole number >= 1, got {max_new}")
    if record is not None:   # a missing folder, or the prompt file itself: refused before the prompt is read
        check_outputs([("--record", record)], [("--prompt-file", prompt_file)], _note)
    prompt = given_prompt(prompt, prompt_file)   # stdin, a file, or bytes that are not UTF-8: now, not after loading
    from ..session.system_prompt import check_system_flags, fit_system, with_system

    check_system_flags(system, opts.raw)

    from ..bench.sim.hindsight import session_hindsight
    from ..engine.decoder import SpeculativeDecoder
    from ..engine.loading.models import load_pair
    from ..render.tables import hindsight_text
    from ..session.hindsight import run_hook
    from ..session.recording import RecordingWriter

    check_models(opts)   # before the prompt is picked and anything loads
    prompt = prompt_or_demo(prompt, opts.seed)

    # Fail on an unwritable --record before spending time on loading models.
    writer = RecordingWriter(record) if record is not None else None
    count = _Count()
    try:
        pair = load_pair(**opts.load_kwargs())
        if system:
            messages, notice = fit_system(pair, with_system(system, [{"role": "user", "content": prompt}]))
            if notice:
                print(f"note: {notice}", file=sys.stderr)
            ids = pair.encode_prompt(messages)
        else:
            ids = pair.encode_prompt(prompt, raw=opts.raw)
        decoder = SpeculativeDecoder(pair, settings, sampling)
        events = count.watch(decoder.generate(ids, max_new_tokens=max_new, user_text=prompt))  # ContextTooLong first
        if json_out:
            _print_json(events, writer)
            return
        _print_session(events, writer, echo, lambda seen: hindsight_text(run_hook(session_hindsight, pair, seen)))
    except KeyboardInterrupt:
        raise Interrupted(count.said(record if writer is not None else None)) from None
    finally:
        if writer is not None:
            writer.close()


def _print_json(events: Iterable[Event], writer: RecordingWriter | None) -> None:
    """Each event as its recording line; the summary line also carries the session in vLLM's terms.

    `speculative_decoding` (mean acceptance length, acceptance rate and
    histograms, per-position and per-step counts: docs/deploy.md) is derived
    from the steps above it by the same tally the run summary reads, so it is
    added at output, not recorded: a `--record` file keeps the recording
    schema as it is, and the reader skips the extra key, so a saved `--json`
    stream still replays.
    """
    from ..session.recording import event_line
    from ..session.stats import RunningStats

    out = sys.stdout
    stats = RunningStats()
    for ev in events:
        stats.add(ev)
        if writer is not None:
            writer.write(ev)
        line = event_line(ev)
        if getattr(ev, "type", None) == "summary":
            line = line[:-1] + ', "speculative_decoding": ' + json.dumps(stats.speculative_decoding) + "}"
        out.write(line + "\n")
        out.flush()


def _note(text: str) -> None:
    print(text, file=sys.stderr)


class _Count:
    """Steps and tokens seen so far, for the one line a Ctrl+C prints."""

    def __init__(self) -> None:
        self.steps = 0
        self.tokens = 0

    def watch(self, events: Iterable[Any]) -> Iterable[Any]:
        for ev in events:
            if getattr(ev, "type", None) == "step":
                self.steps += 1
                self.tokens += len(ev.emitted)
            yield ev

    def said(self, record: Optional[Path]) -> str:
        done = f"{self.tokens} token{'s' * (self.tokens != 1)} generated"
        if record is None:
            return done
        if self.steps == 0:
            return f"{done}; {record} holds no step"
        return (f"{done}; {record} keeps the {self.steps} step{'s' * (self.steps != 1)} before it "
                "(no summary line; `gammatune replay` plays it)")


def _print_session(events: Iterable[Event], writer: RecordingWriter | None, echo: bool,
                   hindsight: Callable[[list[Event]], Any]) -> None:
    """A terminal gets everything on stdout; a pipe gets the text on stdout and the rest on stderr.

    `echo`: the pipe gets the prompt before the text too, so that a file
    made of a code prompt (`> quicksort.py`) starts with the code it continues.

    `hindsight` turns the whole session into its vs-oracle line, after the summary (never inside the loop).
    """
    from ..engine.events import SessionHeader, SessionSummary, StepEvent
    from ..render.printer import has_colour, header_text, legend, make_console, transcript_text
    from ..render.tables import acceptance_text, run_summary_table
    from ..session.stats import stats_of

    console = make_console()
    piped = not console.is_terminal
    meta = make_console(sys.stderr) if piped else console
    seen: list[Any] = []
    header = None
    for ev in events:
        seen.append(ev)
        if writer is not None:
            writer.write(ev)
        if isinstance(ev, SessionHeader):
            header = ev
            meta.print(header_text(ev), soft_wrap=not meta.is_terminal)   # a terminal wraps prose between words
            if not piped:
                console.print(transcript_text([ev]), end="")  # the prompt (user_text) in the prompt colour
            elif echo:   # as typed: the continuation follows it character for character
                console.file.write(ev.user_text or "")
        elif isinstance(ev, StepEvent):
            console.print(transcript_text([ev]), end="")
            console.file.flush()
        elif isinstance(ev, SessionSummary):
            console.print()
            meta.print(run_summary_table(ev, header))
            meta.print(acceptance_text(stats_of(seen).speculative_decoding), soft_wrap=not meta.is_terminal)
            meta.print(hindsight(seen), soft_wrap=not meta.is_terminal)
            if has_colour(meta):
                meta.print(legend())


def register(app: typer.Typer) -> None:
    app.command("run", help="Generate once, headless: coloured text and a summary, or --json events.")(run)
