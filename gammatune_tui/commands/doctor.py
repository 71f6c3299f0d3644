"""`gammatune doctor`: which draft, which policy, which γ0 — and is speculation worth it here at all?

This module parses and checks the options before any model loads (a typo
costs nothing; every mistake is one line and exit status 2) and calls
`bench.doctor.run.run_doctor`. With no --target/--draft it examines the
embedded demo pair's draft beside two deliberately poor drafts built for the
check, so a newcomer sees a real ranking offline.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer
from rich.console import Console
from rich.text import Text

from ..bench.args import DOCTOR_GAMMAS as DEFAULT_GAMMAS
from ..bench.args import DOCTOR_VERIFY_PROMPTS as VERIFY_PROMPTS
from ..bench.args import check_windows, parse_gammas
from ..engine.common.names import DRAFTERS
from ..errors import InvalidParameter
from .input_checks import check_engine_environment
from .options import check_threads, flag_names
from .output_paths import check_outputs, output_file, prompt_set_path
from .prompt_input import input_file
from ..prompts import load_prompt_set
from ..render.console import make_console

DEFAULT_LIMIT = 4
DEFAULT_SELF = "self:int4,self:int8"   # a draft for every target: its own weights at 4 and 8 bits (docs/drafting.md)


def register(app: typer.Typer) -> None:
    app.command("doctor", help="Is a draft worth it on this machine, with which policy and γ0? Ranks candidate "
                               "drafts by simulated speedup over the target alone; --verify checks the advice live.")(doctor)


def doctor(
    target: Optional[str] = typer.Option(None, "--target", metavar="MODEL", help="Target model: local directory or hub id (with neither --target nor --draft: the demo pair's target and draft); its self-drafts are examined unless --self-drafts none."),
    pair: Optional[str] = typer.Option(None, "--pair", metavar="NAME", help="A preset pair (see `gammatune models`) instead of --target: its target, and its draft model when it has one, beside the target's self-drafts."),
    drafts: List[str] = typer.Option([], "--draft", metavar="MODEL", help="A candidate draft (repeatable); each must share the target's tokenizer, or be a self-draft (self:int4, self:int8, self:bf16)."),
    self_drafts: str = typer.Option(DEFAULT_SELF, "--self-drafts", metavar="LIST", help="Quantized copies of the target examined beside the drafts given ('none': only those)."),
    drafters: Optional[str] = typer.Option(None, "--drafters", metavar="LIST", help=f"The candidates as `compare --drafters` names them ({', '.join(DRAFTERS)}, a self-draft, or a head as NAME:PATH; model: the --draft models, kept in any case); instead of --self-drafts. A head or prompt lookup is measured from its own traces (greedy; sampled, a refused row naming the live race)."),
    prompts: Optional[str] = typer.Option(None, "--prompts", metavar="SET", help="Prompt set: code, specbench, or a .jsonl file (default: code for the demo pair, else specbench)."),
    limit: int = typer.Option(DEFAULT_LIMIT, "--limit", min=1, help="Use the first N prompts of the set."),
    max_new_tokens: int = typer.Option(96, "--max-new-tokens", "-n", min=2, help="New tokens per prompt."),
    gammas: str = typer.Option(",".join(map(str, DEFAULT_GAMMAS)), "--gammas", metavar="LIST", help="The γ0 values each method is simulated at."),
    device: str = typer.Option("auto", "--device", metavar="DEVICE", help="auto (cuda, else mps, else cpu), cpu, cuda, cuda:N, mps."),
    dtype: str = typer.Option("auto", "--dtype", metavar="DTYPE", help="auto (as `run`: bfloat16 on a CPU with native bfloat16 for a model of 64 MB+), float32, float16, bfloat16."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="torch CPU threads (default: 1 for models under 100M parameters, else the core count)."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Also write every number to this JSON file (valid after each draft, so a Ctrl+C leaves a partial report).", parser=output_file),
    verify: bool = typer.Option(False, "--verify", help=f"Run the recommendation live on {VERIFY_PROMPTS} prompts beside the target alone: predicted vs measured."),
    raw: bool = typer.Option(False, "--raw", help="Send the prompts as raw text, without the chat template."),
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Allow model repos to run their own Python code (off by default)."),
    allow_pickle: bool = typer.Option(False, "--allow-pickle", help="Allow weights in pickle (.bin) format; by default only safetensors load."),
    temperature: float = typer.Option(0.0, "--temperature", "-t", help="Simulate sampled decoding at this temperature (0 = greedy, the default): sampled traces with coupled draws."),
    top_k: int = typer.Option(0, "--top-k", help="With --temperature: sample from the k most likely tokens (0 = off)."),
    top_p: float = typer.Option(1.0, "--top-p", help="With --temperature: nucleus sampling (1 = off)."),
    seed: int = typer.Option(0, "--seed", help="With --temperature: the seed of the traces' draws (0 to 2^63 - 1)."),
    engines: Optional[str] = typer.Option(None, "--for", metavar="ENGINES", help="Also play the draft it would ship under each serving engine's own knobs (vllm, sglang, llama.cpp, transformers, or all): the best setting each can run, as a command to paste, beside gammatune's own."),
    costs: Optional[str] = typer.Option(None, "--costs", metavar="MS,MS", help="Price the --for and --server-log predictions with your server's costs, DRAFT_MS,VERIFY_MS: ms per drafted token, ms per target forward (batch 1), instead of this machine's."),
    batch: Optional[str] = typer.Option(None, "--batch", metavar="LIST", help="Price the draft it would ship at these server batch sizes (e.g. 1,4,16,64), timed here: the best K at each (0 included), where speculation stops paying, vLLM's num_speculative_tokens_per_batch_size and SGLang's adaptive tiers."),
    batch_costs: Optional[Path] = typer.Option(None, "--batch-costs", metavar="FILE", help="With --batch (or alone): your server's own ms per batch size instead of this machine's, as JSON {\"B\": {\"step_ms\": …, \"draft_ms\": …, \"verify_ms\": {\"K+1\": …}, \"overhead_ms\": … (optional: a step's work outside its forwards)}} (docs/deploy.md).", parser=input_file),
    check_command: Optional[str] = typer.Option(None, "--check-command", metavar="CMD", help="Check a pasted llama-server, `vllm serve` or SGLang launch command for the known speculative-decoding pitfalls (renamed flags, p-min at 0, MTP chained past its depth, MoE verify costs, …), one line each with its source; no model loads (docs/pitfalls.md)."),
    server_log: Optional[Path] = typer.Option(None, "--server-log", metavar="FILE", help="A vLLM per-request spec-decode metrics JSON, a scrape of vLLM's Prometheus /metrics (two scrapes in one file: the window between them), SGLang responses (meta_info.spec_*) or its /server_info (a mean only), TensorRT-LLM responses (choices[].speculative_decoding), AIPerf's per-request records, or a llama.cpp log with its speculative statistics line: its acceptance beside gammatune's for this pair, the best window K' <= the server's K, and the pitfalls its data shows (docs/pitfalls.md).", parser=input_file),
) -> None:
    """Examine candidate drafts for a target: acceptance, costs here, every policy's best γ0, a verdict and a command.

    Greedy decoding (or sampled with --temperature): one trace pass per prompt per
    draft, three short timing passes of the decoder, then every method, the oracle
    and the reference rows played exactly over the traces, each with its spread.
    """
    if check_command is not None:   # a pasted command alone: no model loads
        _print_pitfalls(check_command)
        return
    target, preset_draft = _preset(pair, target)
    if preset_draft and preset_draft not in drafts:
        drafts = [preset_draft, *drafts]
    if drafts and not target:
        raise InvalidParameter("--draft needs --target (the model the drafts would speed up); with neither, doctor "
                               "examines the demo pair")
    check_threads(threads)
    check_engine_environment()
    selfs = _self_drafts(self_drafts)
    if drafters is not None:
        drafts, selfs = _from_drafters(drafters, drafts, self_drafts)
        if not target:
            raise InvalidParameter("--drafters needs --target (the model the drafts would speed up)")
    if target and not drafts and not selfs:
        raise InvalidParameter("give at least one --draft to examine for --target (or leave --self-drafts on)")
    engine_rows, cost_pair, log = _deploy_options(engines, costs, server_log)
    batches, given_batch = _batch_options(batch, batch_costs)
    dupes = sorted({d for d in drafts if drafts.count(d) > 1})
    if dupes:
        raise InvalidParameter(f"--draft {dupes[0]} is given twice")
    from ..bench.doctor.examine import DoctorConfig
    from ..bench.doctor.run import run_doctor
    from ..bench.modes.common import quiet_transformers
    from ..engine.common.devices import resolve_device, resolve_dtype

    gamma_list = tuple(parse_gammas(gammas))
    if gammas != ",".join(map(str, DEFAULT_GAMMAS)):   # the defaults reach past a short -n: they are not the user's
        check_windows(list(gamma_list), max_new_tokens)
    from ..engine.common.sampling import SamplingConfig  # (here: importing it loads torch, which --help does not need)

    with flag_names():   # the engine says `seed`, `top_p`: the user typed --seed, --top-p
        sampling = SamplingConfig(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
    if sampling.greedy and (top_k or top_p != 1.0):
        raise InvalidParameter("--top-k and --top-p shape sampled decoding: give --temperature above 0 with them")
    dev = resolve_device(device)          # InvalidParameter before any model loads
    resolve_dtype(dtype, dev)
    demo = target is None
    prompt_list = load_prompt_set(prompts or ("code" if demo else "specbench"))[:limit]
    if json_out is not None:   # a missing folder is refused now, not created; the prompt set is not overwritten
        check_outputs([("--json", json_out)], [("--prompts", prompt_set_path(prompts))],
                      lambda text: Console(stderr=True).print(Text(text, style="yellow")))
    load_kwargs = {"device": device, "dtype": dtype, "threads": threads, "trust_remote_code": trust_remote_code,
                   "allow_pickle": allow_pickle}
    extra = [f for flag, on in (("--raw", raw), ("--trust-remote-code", trust_remote_code),
                                ("--allow-pickle", allow_pickle)) if on for f in (flag,)]
    for flag, value, default in (("--device", device, "auto"), ("--dtype", dtype, "auto"), ("--threads", threads, None)):
        if value != default:
            extra += [flag, str(value)]
    err = Console(stderr=True)
    quiet_transformers()
    named = ("--pair", pair) if pair and target else ("--target", str(target))   # how the advice names the target
    with _candidates(demo, target, drafts, err, selfs, named) as (target_ref, candidates):
        cfg = DoctorConfig(target_ref, prompt_list, max_new_tokens, gamma_list, raw, load_kwargs, sampling)
        code = run_doctor(make_console(), err, cfg, candidates, json_path=json_out, verify=verify, extra_args=extra,
                          engines=engine_rows, costs=cost_pair, server_log=log, batches=batches,
                          batch_costs=given_batch)
    if code:
        raise typer.Exit(code)


def _print_pitfalls(command: str) -> None:
    """`--check-command`: each pitfall the command walks into, one line each (the command is user text: Text)."""
    from ..bench.doctor.pitfalls import check

    parsed, found = check(command)
    console = make_console()
    console.print(Text(f"{parsed.engine} command" + (f" serving {parsed.model}" if parsed.model else "") + ": "
                       + (f"{len(found)} known pitfall{'s' * (len(found) != 1)}" if found else
                          "no known pitfall (the best K and the acceptance need a measurement: doctor --for, "
                          "--server-log)"), style="bold"), soft_wrap=True)
    for name, line in found:
        console.print(Text.assemble(("pitfall: ", "yellow"), (name, "bold"), " — ", line), soft_wrap=True)


def _deploy_options(engines: Optional[str], costs: Optional[str], server_log: Optional[Path]) -> tuple[list, Any, Any]:
    """--for, --costs and --server-log checked before any model loads: (engine rows, (draft ms, verify ms), (the
    parsed log, its name)); a mistake or an unreadable log is one line."""
    from ..bench.deploy.options import parse_costs, parse_for

    rows, pair = parse_for(engines), parse_costs(costs)
    if pair is not None and not rows and server_log is None:
        raise InvalidParameter("--costs prices the --for and --server-log predictions: give one of them")
    log = None
    if server_log is not None:
        from ..bench.deploy.server_log import read

        log = (read(server_log), str(server_log))
    return rows, pair, log


def _batch_options(batch: Optional[str], batch_costs: Optional[Path]) -> tuple[list[int], Any]:
    """--batch and --batch-costs checked before any model loads: (batch sizes, the server's prices or None)."""
    import json

    from ..bench.batch_prices import parse_batches, read_costs

    sizes = parse_batches(batch)
    if batch_costs is None:
        return sizes, None

    try:
        data = json.loads(batch_costs.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidParameter(f"--batch-costs {batch_costs}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidParameter(f"--batch-costs {batch_costs}: not a JSON file ({exc})") from None
    given = read_costs(data, str(batch_costs))
    if sizes:
        missing = [b for b in sizes if b not in given.step_s]
        if missing:
            raise InvalidParameter(f"--batch-costs {batch_costs} has no prices for batch {missing[0]}")
        given.step_s = {b: given.step_s[b] for b in sizes}
    return sizes or given.batches, given


def _preset(pair: Optional[str], target: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """--pair NAME as (the target doctor examines, the preset's draft model or None); `--pair demo` is the default."""
    if pair is None:
        return target, None
    if target is not None:
        raise InvalidParameter("give --pair or --target, not both")
    from ..engine.loading.presets import DEMO, PRESETS, pair_names, preset_target

    if pair == DEMO:
        return None, None
    preset = PRESETS.get(pair)
    if preset is None:
        raise InvalidParameter(f"unknown pair {pair!r}; choose from {', '.join(pair_names())}")
    found = preset_target(preset)   # ModelLoadError (one line) when its package is not installed
    if preset.from_package:
        from ..engine.loading.gguf import converted_path

        Console(stderr=True).print(Text(f"--pair {pair}: the target is {found} (installed by "
                                        f"{preset.package.split('==')[0]}); its conversion is kept in "  # type: ignore[union-attr]
                                        f"{converted_path(Path(found))}", style="dim"))
    return found, preset.draft


def _from_drafters(text: str, drafts: List[str], self_drafts: str) -> tuple[List[str], List[str]]:
    """--drafters as compare reads it: (the drafts to examine, the self-drafts). The --draft models stay (`model`
    names them, and needs one); the self-drafts are the ones it names (with --self-drafts too, it would be
    unclear which count)."""
    from ..engine.common.names import is_self_draft
    from ..engine.drafting.draft_sources import parse_drafters

    names = parse_drafters(text)
    if self_drafts != DEFAULT_SELF:
        raise InvalidParameter("--drafters names the self-drafts too: give them there, not also in --self-drafts")
    if "model" in names and not drafts:
        raise InvalidParameter("--drafters model examines the --draft models: give one with --draft (or a --pair "
                               "that has one)")
    others = [n for n in names if n != "model" and not is_self_draft(n)]
    return [*drafts, *(n for n in others if n not in drafts)], [n for n in names if is_self_draft(n)]


def _self_drafts(text: str) -> list[str]:
    """--self-drafts: canonical self-draft names ('none' or '': no self-drafts); a bad one is one line."""
    if text.strip().lower() in ("", "none"):
        return []
    from ..engine.drafting.self_draft import parse_self_draft

    names = [parse_self_draft(p).name for p in text.split(",") if p.strip()]
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def _candidates(demo: bool, target: Optional[str], drafts: List[str],
                err: Console, selfs: List[str] = (),  # type: ignore[assignment]
                named: tuple[str, ...] = ()) -> Iterator[tuple[str, list]]:
    """The target and the Candidates to examine: the user's, or the demo pair's draft beside two poor ones;
    then the target's self-drafts (`selfs`) not given already."""
    from ..bench.doctor.examine import Candidate
    from ..bench.doctor.candidates import built_demo_candidates, demo_target
    from ..engine.common.names import is_self_draft

    given = {d.strip().lower() for d in drafts if is_self_draft(d)}
    if not demo:
        named = named or ("--target", str(target))
        own = [Candidate(s, s, (*named, "--draft", s)) for s in selfs if s not in given]
        yield str(target), [Candidate(d, d, (*named, "--draft", d)) for d in drafts] + own
        return
    ref = demo_target()   # ModelLoadError (one line) when the demo pair is not installed
    err.print(Text("no --target/--draft: examining the demo pair's draft beside two deliberately poor drafts "
                   "built for this check (the draft's first layer alone; random weights, one layer)"
                   + (f" and the target's own {' and '.join(selfs)}" if selfs else ""), style="dim"))
    with built_demo_candidates() as cands:
        yield ref, cands + [Candidate(s, s, ("--draft", s)) for s in selfs]
