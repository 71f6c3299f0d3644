"""`gammatune compare`: several γ policies on one pair, prompt and seed, side by side.

The pair is loaded once; each method then runs alone (honest timings), and the
TUI plays the measured streams as a race. `--print` measures and prints the
transcripts and the ranked summary without the TUI (for scripts and CI).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from ..engine.policies import METHODS
from ..session.compare import CompareRunner, engine_factory, parse_methods
from .options import CommonOptions, common_options


def chat_prompt(text: str, raw: bool) -> Any:
    """Raw text goes to the model as is; otherwise one user message through the pair's chat format."""
    return text if raw else [{"role": "user", "content": text}]


def build_runner(pair: Any, methods: list[str], opts: CommonOptions, prompt_text: str) -> CompareRunner:
    settings = opts.policy_settings(method=methods[0])
    sampling = opts.sampling(demo_defaults=bool(getattr(pair, "is_demo", opts.uses_demo)))
    return CompareRunner(
        engine_factory(pair), methods, settings, sampling, chat_prompt(prompt_text, opts.raw),
        opts.max_new_tokens, user_text=prompt_text,
    )


def _load_pair(opts: CommonOptions, progress=None) -> Any:
    from ..engine import load_pair  # torch: imported only when a model is needed

    return load_pair(**opts.load_kwargs(), progress=progress)


@common_options()
def compare(
    prompt: Optional[str] = typer.Argument(None, help="The prompt (default: a random demo prompt)."),
    methods: str = typer.Option(",".join(METHODS), "--methods", "-M", help="2 to 5 comma-separated methods to compare."),
    record: Optional[Path] = typer.Option(None, "--record", help="Write every method's event stream to one JSONL recording."),
    print_: bool = typer.Option(False, "--print", "--no-tui", help="Measure, then print transcripts and the ranked summary (no TUI)."),
    theme: Optional[str] = typer.Option(None, "--theme", help="Colour theme of the TUI."),
    *,
    opts: CommonOptions,
) -> None:
    """Compare γ policies on the same models, prompt and seed: each runs alone, then they race.

    Methods: specdecode, hf-heuristic, assistant-threshold, gammatune, gammatune+ (default: all five).
    """
    method_list = parse_methods(methods)
    opts.policy_settings(method=method_list[0])  # validate η, δ, τ, γ bounds before loading models
    opts.sampling()
    if prompt is None:
        from ..prompts import random_demo_prompt

        prompt = random_demo_prompt().text
    if not prompt.strip():
        from ..errors import InvalidParameter

        raise InvalidParameter("the prompt is empty")
    if opts.uses_demo:
        from ..resources import require_demo_pair

        require_demo_pair()
    if print_:
        _headless(prompt, method_list, opts, record)
        return
    from ..ui.screens.compare import launch_compare

    launch_compare(prompt, method_list, opts, record=record, theme=theme)


def _headless(prompt: str, methods: list[str], opts: CommonOptions, record: Optional[Path]) -> None:
    from ..session.printer import make_console, print_runs
    from ..session.recording import RecordingWriter

    def loading(stage: str, frac: float) -> None:
        print(f"\rloading models: {stage} {frac:4.0%}   ", end="", file=sys.stderr, flush=True)

    pair = _load_pair(opts, loading if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    runner = build_runner(pair, methods, opts, prompt)

    def progress(i: int, n: int, label: str, tokens: int) -> None:
        if sys.stderr.isatty() and i < n:
            print(f"\rmeasuring {i + 1}/{n}: {label} · {tokens} tokens   ", end="", file=sys.stderr, flush=True)

    writer = RecordingWriter(record) if record else None
    try:
        runner.run(progress, writer)
    finally:
        if writer:
            writer.close()
        if sys.stderr.isatty():
            print(file=sys.stderr)
    print_runs(make_console(), runner.runs, compare=True)
    if record:
        print(f"recorded to {record}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
