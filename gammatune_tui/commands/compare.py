"""`gammatune compare`: several γ policies on one pair, prompt and seed, side by side.

The pair is loaded once; each method then runs alone (honest timings),
`--repeats` times in interleaved rounds beside plain target-only decoding,
and the TUI plays each method's median run as a race. `--print` measures and
prints the transcripts and the ranked summary without the TUI (for scripts
and CI). `--json FILE` saves each contestant's settings, speed-up over
target-only with its spread and acceptance in vLLM's terms (compare_json.py).
`--drafters model,prompt-lookup` races each method once per draft source
(`specdecode/model`, `specdecode/lookup`, …) on the same target and prompt.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..engine.policies import LIVE_DEFAULT_METHODS, parse_methods
from ..engine.common.names import DRAFTERS, MODEL as MODEL_DRAFTER, MODEL_FREE
from ..engine.loading.presets import preset_drafter
from ..errors import Interrupted, InvalidParameter
from ..session.compare import DEFAULT_REPEATS, MAX_METHODS, MIN_METHODS
from .input_checks import check_methods_text, check_repeats, check_theme
from .output_paths import check_outputs, output_file, same_file
from .options import CommonOptions, check_models, common_options, given_on_command_line, prompt_or_demo
from .prompt_input import given_prompt, prompt_file_option, system_option
from .terminal import prints_instead_of_tui

if TYPE_CHECKING:   # the job loads torch: it is imported where the race starts
    from ..session.compare import CompareSummary
    from ..session.compare_job import CompareJob


@common_options(hidden=("method",))
def compare(
    ctx: typer.Context,
    prompt: Optional[str] = typer.Argument(None, metavar="PROMPT", help="The prompt; - or a piped stdin reads it (default: the demo prompt --seed picks, named on stderr)."),
    prompt_file: Optional[Path] = prompt_file_option(),
    system: Optional[str] = system_option(),
    methods: Optional[str] = typer.Option(None, "--methods", "-M", show_default=False, metavar="LIST",
                                          help=f"{MIN_METHODS} to {MAX_METHODS} comma-separated methods to compare, or all (default: "
                                               f"{', '.join(LIVE_DEFAULT_METHODS)}; specdecode,gammatune+ with --drafters)."),
    drafters: Optional[str] = typer.Option(None, "--drafters", "-D", metavar="LIST", help=f"Race draft sources too ({', '.join(DRAFTERS)} or a self-draft): model,self:int4,{MODEL_FREE[0]} runs every method once per source (self-drafts are built from the target at load; at most {MAX_METHODS} contestants)."),
    repeats: int = typer.Option(DEFAULT_REPEATS, "--repeats", "-r",
                                help="Runs per method (and of target-only decoding), in interleaved rounds; the table "
                                     "shows the median and the spread, and ranks only beyond the spread (1 = no ranking)."),
    record: Optional[Path] = typer.Option(None, "--record", metavar="FILE", parser=output_file, help="Write every run's event stream to one JSONL recording."),
    print_: bool = typer.Option(False, "--print", "--no-tui", help="Measure, then print transcripts and the ranked summary (no TUI)."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", parser=output_file, help="Also write every contestant's settings, speed-up over target-only with its spread, and acceptance in vLLM's terms to this JSON file."),
    theme: Optional[str] = typer.Option(None, "--theme", metavar="NAME", help="Colour theme of the TUI."),
    *,
    opts: CommonOptions,
) -> None:
    """Compare γ policies on the same models, prompt and seed: each runs alone, several times, then they race.

    Methods: the paper's specdecode, hf-heuristic, assistant-threshold, gammatune, gammatune+; the peers'
    adaptive-k, p-min, adaedl, svip, ema-tiers, ucb; gammatune's own costaware (default: the paper's five,
    adaptive-k and costaware; --methods all races all twelve).
    Plain target-only decoding is measured beside them as a reference row.
    """
    if given_on_command_line(ctx, "method"):
        other = "gammatune+" if opts.method == "specdecode" else "specdecode"
        raise InvalidParameter(f"compare runs several methods: use --methods (e.g. --methods {other},{opts.method}), "
                               "not --method")
    check_repeats(repeats)
    check_methods_text(methods)
    check_theme(theme)   # with --print too: a typo is said, not ignored
    sampling = opts.sampling(demo_defaults=opts.uses_demo)   # a bad --top-p or --temperature: before torch loads
    from ..session.system_prompt import check_system_flags

    check_system_flags(system, opts.raw)
    _check_draft_model_exists(opts, drafters)
    from ..engine.drafting.draft_sources import parse_drafters
    from ..session.compare_job import CompareJob

    drafter_list = [opts.drafter_settings(name) for name in parse_drafters(drafters)] if drafters is not None else None
    several = drafter_list is not None and len(drafter_list) > 1
    _check_model_is_not_twice(opts.values.get("draft"), drafter_list)
    if methods is None:
        methods = "specdecode,gammatune+" if several else ",".join(LIVE_DEFAULT_METHODS)
    method_list = parse_methods(methods, at_least=1 if several else MIN_METHODS, at_most=MAX_METHODS)
    settings = opts.policy_settings(method=method_list[0])   # η, δ, τ, γ checked before any model loads
    opts.check_flags_read(method_list, drafter_list)
    if opts.max_new_tokens < 1:
        raise InvalidParameter(f"--max-new-tokens must be a whole number >= 1, got {opts.max_new_tokens}")
    _check_output_files(record, json_out, prompt_file)
    prompt = given_prompt(prompt, prompt_file)   # stdin, a file, or bytes that are not UTF-8: before anything loads
    load_kwargs = opts.load_kwargs()
    if drafter_list is not None:  # the draft model is loaded when one contestant drafts with it
        load_kwargs["drafter"] = next((d for d in drafter_list if d.loads_draft), drafter_list[0])
        if all(not d.loads_draft for d in drafter_list) and opts.values.get("draft"):
            raise InvalidParameter("--draft names a draft model, but no drafter in --drafters uses one")
    check_models(opts, load_kwargs)   # a wrong path, an uncached hub id or -n past the context: one line, before the TUI
    prompt = prompt_or_demo(prompt, opts.seed)
    job = CompareJob(method_list, settings, sampling, prompt, opts.max_new_tokens, raw=opts.raw,
                     load_kwargs=load_kwargs, record=record, repeats=repeats, drafters=drafter_list, system=system)
    if prints_instead_of_tui(print_, "compare"):
        _measure_and_print(job, record, json_out)
    else:
        from ..ui.app import make_compare_app

        make_compare_app(job, title=f"compare: {prompt[:60]}", theme=theme).run()
        if json_out is not None:
            _save_json(json_out, job, job.summary() if job.runs else None)


def _check_model_is_not_twice(draft: Optional[str], drafters: Optional[list]) -> None:
    """With --draft self:int8, the `model` drafter is self:int8: naming both races one drafter against itself."""
    from ..engine.common.names import MODEL, is_self_draft
    from ..engine.drafting.draft_sources import DrafterSettings

    if not drafters or not is_self_draft(draft):
        return
    names = [d.name for d in drafters]
    own = DrafterSettings(str(draft)).name
    if MODEL in names and own in names:
        raise InvalidParameter(f"--drafters names both model and {own}, and --draft {draft} makes the model drafter "
                               f"{own}: the two are one drafter; leave one out")


def _check_output_files(record: Optional[Path], json_out: Optional[Path], prompt_file: Optional[Path]) -> None:
    """--record and --json: a missing folder, a directory, or the prompt file itself: one line before anything loads."""
    outputs = [(flag, path) for flag, path in (("--record", record), ("--json", json_out)) if path is not None]
    if record is not None and json_out is not None and same_file(record, json_out):
        raise InvalidParameter(f"--json {json_out} and --record {record} name the same file; give each its own")
    if outputs:
        check_outputs(outputs, [("--prompt-file", prompt_file)], lambda text: print(text, file=sys.stderr))


def _save_json(path: Path, job: CompareJob, summary: CompareSummary | None) -> None:
    if summary is None:
        print(f"note: nothing was measured, so {path} was not written", file=sys.stderr)
        return
    from .compare_json import write_compare_json

    write_compare_json(path, job, summary)
    print(f"wrote {path}", file=sys.stderr)


def _check_draft_model_exists(opts: CommonOptions, drafters: Optional[str]) -> None:
    """A contestant that drafts with a model on a preset without one (`--pair smollm2`): one line, before loading.

    `load_pair` quietly lets such a pair draft by prompt lookup (what `run`
    wants), so without this check the model contestant failed only after
    the target had loaded. Read from the flag's text,
    before torch is imported (the full parse, with its errors, comes next).
    """
    pair = opts.values.get("pair")
    names = {n.strip() for n in (drafters or "").split(",")}
    if MODEL_DRAFTER in names and preset_drafter(pair, opts.values.get("draft")):
        raise InvalidParameter(f"--drafters model needs a draft model, but --pair {pair} has none: "
                               f"give one with --draft MODEL, or race self:int4 or {MODEL_FREE[0]} "
                               f"(--drafters self:int4,{MODEL_FREE[0]})")


def _measure_and_print(job: CompareJob, record: Optional[Path], json_out: Optional[Path] = None) -> None:
    """Progress on stderr (on a terminal), the transcripts and the ranked summary on stdout."""
    from ..render.printer import make_console, print_runs

    tty = sys.stderr.isatty()
    done = [0, 0]   # runs finished, runs in all: what a Ctrl+C reports

    def loading(stage: str, frac: float) -> None:
        if tty:
            print(f"\rloading models: {stage} {frac:4.0%}   ", end="", file=sys.stderr, flush=True)

    def progress(i: int, n: int, label: str, tokens: int) -> None:
        done[:] = [i, n]
        if tty and i < n:
            print(f"\rmeasuring {i + 1}/{n}: {label} · {tokens} tokens   ", end="", file=sys.stderr, flush=True)

    try:
        job.prepare(loading)
        if tty:
            print(file=sys.stderr)
        if job.notice:
            print(f"note: {job.notice}", file=sys.stderr)
        try:
            summary = job.run(progress)
        finally:
            if tty:
                print(file=sys.stderr)
    except KeyboardInterrupt:
        measured = f"{done[0]} of {done[1]} runs measured" if done[1] else "while loading the models, nothing measured"
        kept = f"; {record} keeps the finished runs" if record and done[0] else ""
        raise Interrupted(measured + kept) from None
    print_runs(make_console(), job.runs, compare=True, summary=summary)
    if record:
        print(f"recorded to {record}", file=sys.stderr)
    if json_out is not None:
        _save_json(json_out, job, summary)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
