"""`gammatune run [PROMPT]`: one headless session, streamed to stdout.

Plain mode colours the text as SPEC §4 (prompt blue, accepted draft tokens
green, target tokens red) and ends with a summary table; `--json` writes the
event stream itself (SPEC §3) and nothing else on stdout, so it can be piped
into `jq` or saved as a recording. Model output is untrusted text: it is shown
only through `rich.text.Text` after `printable()` has escaped control
characters.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ..bench.hindsight import session_hindsight
from ..engine.decoder import SpeculativeDecoder
from ..engine.events import SessionHeader, SessionSummary, StepEvent
from ..engine.models import load_pair
from ..errors import InvalidParameter
from ..prompts import random_demo_prompt
from ..render.printer import header_text, legend, make_console, transcript_text
from ..render.safe_text import printable
from ..render.tables import hindsight_text, run_summary_table
from ..session.hindsight import run_hook
from ..session.recording import RecordingWriter, event_line
from .options import common_options


@common_options()
def run(
    prompt: Optional[str] = typer.Argument(
        None, help="The prompt (chat-formatted unless --raw). Omitted: a random demo prompt, named on stderr.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the event stream as JSON Lines on stdout, nothing else."),
    record: Optional[Path] = typer.Option(
        None, "--record", help="Also write the event stream to FILE (JSON Lines, flushed every step).",
        metavar="FILE", dir_okay=False,
    ),
    *,
    opts,
) -> None:
    """Generate once, headless: coloured text and a summary, or the event stream with --json."""
    settings = opts.policy_settings()
    sampling = opts.sampling(demo_defaults=opts.uses_demo)
    max_new = opts.max_new_tokens
    if max_new < 1:
        raise InvalidParameter(f"--max-new-tokens must be a whole number >= 1, got {max_new}")
    if prompt is not None and not prompt.strip():
        raise InvalidParameter("the prompt is empty")
    if prompt is None:
        picked = random_demo_prompt(opts.seed)
        prompt = picked.text
        first_line = printable(prompt.splitlines()[0] if prompt.strip() else prompt)
        print(f"gammatune: no prompt given; using demo prompt {picked.id} ({picked.category}): {first_line}",
              file=sys.stderr)

    # Fail on an unwritable --record before spending time on loading models.
    writer = RecordingWriter(record) if record is not None else None
    try:
        pair = load_pair(**opts.load_kwargs())
        ids = pair.encode_prompt(prompt, raw=opts.raw)
        decoder = SpeculativeDecoder(pair, settings, sampling)
        events = decoder.generate(ids, max_new_tokens=max_new, user_text=prompt)
        if json_out:
            out = sys.stdout
            for ev in events:
                if writer is not None:
                    writer.write(ev)
                out.write(event_line(ev) + "\n")
                out.flush()
            return
        console = make_console()
        seen = []
        for ev in events:
            seen.append(ev)
            if writer is not None:
                writer.write(ev)
            if isinstance(ev, SessionHeader):
                console.print(header_text(ev))
                console.print(transcript_text([ev]), end="")  # the prompt (user_text) in the prompt colour
            elif isinstance(ev, StepEvent):
                console.print(transcript_text([ev]), end="")
                console.file.flush()
            elif isinstance(ev, SessionSummary):
                console.print()
                console.print(run_summary_table(ev))
                console.print(hindsight_text(run_hook(session_hindsight, pair, seen)))
                console.print(legend())
    finally:
        if writer is not None:
            writer.close()


def register(app: typer.Typer) -> None:
    app.command("run", help="Generate once, headless: coloured text and a summary, or --json events.")(run)
