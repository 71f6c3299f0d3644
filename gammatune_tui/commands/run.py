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
from rich.table import Table

from ..engine.events import SessionHeader, SessionSummary, StepEvent
from ..errors import InvalidParameter
from ..session.printer import header_text, legend, make_console, printable, transcript_text
from .options import common_options


def _summary_table(s: SessionSummary) -> Table:
    table = Table(title="run summary", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("tokens", "steps", "α", "tokens/step", "tokens/s", "target calls", "draft calls", "stop"):
        table.add_column(col, justify="right" if col != "stop" else "left")
    table.add_row(
        str(s.tokens), str(s.steps), f"{s.acceptance_rate:.2f}", f"{s.tokens_per_step:.2f}",
        f"{s.tokens_per_s:.1f}", str(s.target_calls), str(s.draft_calls), s.stop_reason,
    )
    return table


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
        from ..prompts import random_demo_prompt

        picked = random_demo_prompt(opts.seed)
        prompt = picked.text
        first_line = printable(prompt.splitlines()[0] if prompt.strip() else prompt)
        print(f"gammatune: no prompt given; using demo prompt {picked.id} ({picked.category}): {first_line}",
              file=sys.stderr)

    # Fail on an unwritable --record before spending time on loading models.
    writer = None
    if record is not None:
        from ..session.recording import RecordingWriter

        writer = RecordingWriter(record)

    from ..engine.decoder import SpeculativeDecoder
    from ..engine.models import load_pair
    from ..session.recording import event_line

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
        for ev in events:
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
                console.print(_summary_table(ev))
                console.print(legend())
    finally:
        if writer is not None:
            writer.close()


def register(app: typer.Typer) -> None:
    app.command("run", help="Generate once, headless: coloured text and a summary, or --json events.")(run)
