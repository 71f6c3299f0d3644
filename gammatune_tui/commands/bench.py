"""`gammatune bench`: the paper's evaluation on any pair, the trace simulator, tuning and Table 1.

This module parses and checks the options — before any model loads, so a
typo costs nothing; every user mistake ends as one line and exit status 2 —
and calls one mode of `bench.modes`: `run_sweep` (live, or `--simulate` with
`--tune`) or `run_latency`.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, Optional, cast

import click
import typer
from rich.console import Console
from rich.text import Text

from ..bench.args import check_windows, parse_gammas, parse_ints
from ..engine.policies import LIVE_DEFAULT_METHODS, METHODS, TUNABLE_METHODS, PolicyParams, parse_methods
from ..errors import InvalidParameter
from ..render.table_fit import FittingConsole
from .input_checks import check_methods_text, check_repeats
from .options import CommonOptions, common_options, flag_names
from .output_paths import (StdoutUntilClosed, check_json_and_csv, check_output, check_outputs,
                           output_file, prompt_set_path)
from .prompt_input import prompt_file_option
from .prompt_sets import bench_prompts

DEFAULT_GAMMAS = "1,2,3,4,5,6,7,8,12,16,20,24"
BENCH = "Benchmark"


def _given(ctx: typer.Context | click.Context | None, name: str) -> bool:
    """Whether an option was typed on the command line (not just its default)."""
    if ctx is None:
        return False
    src = ctx.get_parameter_source(name)
    return src is not None and src.name == "COMMANDLINE"


def register(app: typer.Typer) -> None:
    app.command("bench", help="Reproduce the paper's Table 2 on a pair: every method × γ0, live or simulated; "
                              "--tune searches the policy parameters; --latency gives Table 1.")(bench)


@common_options(hidden=("repetition_penalty",))
def bench(
    ctx: typer.Context,
    prompts: Optional[str] = typer.Option(None, "--prompts", metavar="SET", help="Prompt set: code, specbench, a .jsonl file, or - (JSON Lines on stdin) (default: code for the demo pair, else specbench).", rich_help_panel=BENCH),
    prompt_file: Optional[Path] = prompt_file_option(BENCH, takes_prompt=False),
    methods: Optional[str] = typer.Option(None, "--methods", metavar="LIST", help=f"Comma-separated methods, or all (the {len(METHODS)}). Default: all when simulating or tuning; "
                                 f"a live sweep runs {', '.join(LIVE_DEFAULT_METHODS)}.", rich_help_panel=BENCH),
    gammas: Optional[str] = typer.Option(None, "--gammas", metavar="LIST", help="Comma-separated initial γ0 values (default: the paper's 1–8, 12, 16, 20, 24).", rich_help_panel=BENCH),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Times each (prompt, method, γ0) is run live.", rich_help_panel=BENCH),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Use only the first N prompts of the set.", rich_help_panel=BENCH),
    out: Path = typer.Option(Path("gammatune-bench.json"), "--out", "-o", metavar="FILE", parser=output_file, help="JSON file with every raw number and the environment; a CSV goes beside it.", rich_help_panel=BENCH),
    simulate: bool = typer.Option(False, "--simulate", help="Record one trace per prompt and play every policy exactly over it (greedy, or sampled with -t/--top-k/--top-p: coupled draws).", rich_help_panel=BENCH),
    validate: bool = typer.Option(False, "--validate", help="With --simulate: also run the live sweep and compare it with the simulation cell by cell.", rich_help_panel=BENCH),
    check_live: Optional[int] = typer.Option(None, "--check-live", min=0, help="With --simulate: prompts on which every method at a few γ0 is also run live and compared step by step (sampled: tokens per step, 4 live seeds each; default 1 when the traces are recorded, 0 when they come from the cache).", rich_help_panel=BENCH),
    traces_path: Optional[Path] = typer.Option(None, "--traces", metavar="FILE", parser=output_file, help="With --simulate/--tune: keep the traces and cost model in this file instead of the cache.", rich_help_panel=BENCH),
    refresh_traces: bool = typer.Option(False, "--refresh-traces", help="With --simulate/--tune: record the traces and time the decoder again, even when they are cached (in $GAMMATUNE_CACHE_DIR, else ~/.cache/gammatune).", rich_help_panel=BENCH),
    tune_: bool = typer.Option(False, "--tune", help="Search the policy's parameters on the traces (η, δ, τ and the γ bounds; adaptive-k: its EMA weight, prior, cooldown and the γ bounds). Implies --simulate.", rich_help_panel=BENCH),
    tune_method: str = typer.Option("gammatune+", "--tune-method", metavar="METHOD", help="The policy whose parameters --tune optimises.", rich_help_panel=BENCH),
    std_weight: float = typer.Option(1.0, "--std-weight", min=0.0, help="--tune score: mean speedup − this × its std across γ0.", rich_help_panel=BENCH),
    no_baselines: bool = typer.Option(False, "--no-baselines", help="Live sweep: skip target-only decoding and transformers' assisted generation, or its prompt lookup with a drafter that needs no draft model (measured by default).", rich_help_panel=BENCH),
    latency: bool = typer.Option(False, "--latency", help="The paper's Table 1 instead: ms per token and per verify pass for model shapes, random weights.", rich_help_panel=BENCH),
    shape: list[str] = typer.Option([], "--shape", metavar="SHAPE", help="--latency: a built-in shape (repeatable) or a path to a config.json; default: every built-in shape that fits.", rich_help_panel=BENCH),
    latency_context: int = typer.Option(128, "--latency-context", min=1, help="--latency: tokens already in the KV cache.", rich_help_panel=BENCH),
    engines: Optional[str] = typer.Option(None, "--for", metavar="ENGINES", help="With --simulate: also play the draft under each serving engine's own knobs (vllm, sglang, llama.cpp, transformers, or all) and print the best setting each can run as a command.", rich_help_panel=BENCH),
    costs: Optional[str] = typer.Option(None, "--costs", metavar="MS,MS", help="With --for: price it with your server's costs: DRAFT_MS,VERIFY_MS (ms per drafted token, ms per target forward, batch 1).", rich_help_panel=BENCH),
    verify_ks: str = typer.Option("1,2,4,8,16", "--verify-k", metavar="LIST", help="--latency: verify window sizes to time.", rich_help_panel=BENCH),
    *,
    opts: CommonOptions,
) -> None:
    check_methods_text(methods)
    check_repeats(repeats)
    sampling = opts.sampling()   # a bad --top-p or --temperature: one line before torch loads
    if sampling.repetition_penalty != 1.0:
        raise InvalidParameter("bench measures the paper's protocol, without a repetition penalty: leave "
                               "--repetition-penalty out (run, chat and compare take it)")
    from ..bench.modes.latency import run_latency
    from ..bench.modes.simulate import SimulateOptions
    from ..bench.modes.sweep import run_sweep
    from ..bench.live.protocol import ALL_BASELINES, LOOKUP_BASELINES, PLAIN, SweepConfig

    # a Console whose tables fit the width, never cut (render/table_fit.py); a closed stdout (`| head`) drops
    # the tables but not the files --out asks for
    console = FittingConsole(file=cast(IO[str], StdoutUntilClosed()))   # a file in all but its class
    err = Console(stderr=True)

    def note(text: str) -> None:
        err.print(Text(text, style="yellow"))

    if latency:
        check_output(out, "--out")   # a folder first: `.` has no name to put .csv on
        check_json_and_csv(out, out.with_suffix(".csv"))
        check_outputs([("--out", out), ("--out", out.with_suffix(".csv"))], note=note)
        run_latency(console, err, device=opts.device, dtype=opts.dtype, threads=opts.threads, shapes=shape,
                    context=latency_context, ks=parse_ints(verify_ks, "--verify-k"), out=out, engine=opts.engine)
        return
    # --methods/--gammas sweep; a lone --method/--gamma (the shared options) narrows the sweep to it
    method_list = parse_methods(methods) if methods is not None else (
        parse_methods(opts.method) if _given(ctx, "method") else
        list(METHODS if simulate or tune_ else LIVE_DEFAULT_METHODS))
    gamma_list = parse_gammas(gammas) if gammas is not None else (
        parse_gammas(str(opts.gamma)) if _given(ctx, "gamma") else parse_gammas(DEFAULT_GAMMAS))
    if not sampling.greedy and not (simulate or tune_):
        raise InvalidParameter("a live bench measures greedy decoding (the paper's protocol): --temperature above 0 "
                               "needs --simulate (or --tune)")
    if not sampling.greedy and validate:
        raise InvalidParameter("--validate compares cells run greedily; at --temperature above 0 the live check "
                               "(--check-live N) compares tokens per step in law")
    if opts.max_new_tokens < 1:
        raise InvalidParameter(f"--max-new-tokens must be >= 1, got {opts.max_new_tokens}")
    # the windows the user gave (the default list reaches past a short -n: its long windows just never fill)
    check_windows(gamma_list if gammas is not None or _given(ctx, "gamma") else [], opts.max_new_tokens,
                  opts.gamma_max)
    if tune_ and tune_method not in TUNABLE_METHODS:
        raise InvalidParameter(f"--tune-method must be {', '.join(TUNABLE_METHODS[:-1])} or {TUNABLE_METHODS[-1]}, got {tune_method!r}")
    params = _policy_params(opts)
    if validate and not (simulate or tune_):
        raise InvalidParameter("--validate compares the simulation with a live run: use it with --simulate")
    if gamma_list and "specdecode" not in method_list:
        err.print(Text("note: specdecode is not in --methods, so Table 2 (speedup over specdecode) is skipped",
                       style="yellow"))
    # PromptFileError → one line, before any model loads
    prompt_set, prompt_list = bench_prompts(prompts, prompt_file, "code" if opts.uses_demo else "specbench")
    if limit:
        prompt_list = prompt_list[:limit]
    # every file written at the end is checked now, before minutes of work: a missing folder, an input
    from ..bench.report.files import csv_path_for

    inputs = [("--prompts", prompt_set_path(prompts)), ("--prompt-file", prompt_file), ("--traces", traces_path)]
    check_output(out, "--out", inputs)   # a folder first: `.` has no name to put .csv on
    check_json_and_csv(out, csv_path_for(out))
    check_outputs([("--out", out), ("--out", csv_path_for(out))], inputs, note)
    if traces_path is not None:
        check_output(traces_path, "--traces", inputs[:2])
    # a sweep without a draft model races transformers' prompt lookup; a model sweep its assisted generation
    drafter = opts.drafter_settings()
    peers = {"assistant_model": ALL_BASELINES, "prompt_lookup_num_tokens": LOOKUP_BASELINES}.get(drafter.hf_peer, (PLAIN,))
    if drafter.point_mass and not sampling.greedy:
        raise InvalidParameter(f"--simulate at --temperature above 0 needs a draft model: {drafter.name}'s proposals "
                               "depend on where each window starts, so its sampled runs cannot share one trace")
    if drafter.hf_peer == "prompt_lookup_num_tokens" and not no_baselines and drafter.params().get("ngram_min", 1) != 1 and not (simulate or tune_):
        err.print(Text(f"note: transformers' prompt lookup matches n-grams down to 1; with --ngram-min "
                       f"{drafter.param('ngram_min')} the two are not at matched settings", style="yellow"))
    from ..bench.deploy.options import parse_costs, parse_for

    engine_rows, cost_pair = parse_for(engines), parse_costs(costs)
    if engine_rows and not simulate:
        raise InvalidParameter("--for plays the engines over the traces: use it with --simulate")
    if engine_rows and drafter.point_mass:   # each engine's lookup matches by its own rule, not played here
        raise InvalidParameter(f"--for plays a draft model's or a head's traces; with --drafter {drafter.name} see "
                               "docs/deploy.md")
    if cost_pair is not None and not engine_rows:
        raise InvalidParameter("--costs prices the --for predictions: give --for too")
    cfg = SweepConfig(methods=method_list, gammas=gamma_list, max_new_tokens=opts.max_new_tokens, repeats=repeats,
                      params=params, seed=opts.seed, baselines=() if no_baselines else peers, sampling=sampling)
    sim = SimulateOptions(traces_path, check_live, validate, tune_method if tune_ else None, std_weight,
                          refresh=refresh_traces, engines=tuple(engine_rows), costs=cost_pair) if simulate or tune_ else None
    run_sweep(console, err, cfg, prompt_list, prompt_set=prompt_set, load_kwargs=opts.load_kwargs(), raw=opts.raw,
              out=out, simulate=sim)


def _policy_params(opts: CommonOptions) -> dict[str, Any]:
    """The policy parameters given on the command line (validated now, not after the models load)."""
    given = {k: x for k, x in opts.policy_params(gamma0=None).items() if x is not None}
    with flag_names():
        PolicyParams.build(**given)
    return given
