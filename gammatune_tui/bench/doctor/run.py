"""`gammatune doctor` from start to finish: examine each draft under one progress bar, then report and advise.

The report is saved after every draft, so Ctrl+C (or a crash) leaves a
partial but valid JSON file, and the tables of the drafts already examined are
printed before the command exits with 130. `--verify` then runs the
recommendation live on a few prompts beside target-only decoding, so the
prediction can be checked against this machine's clock.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .grid import settings as grid_settings
from .busy import busy_reasons, busy_warning, load_average
from .timing import TIMING_PASSES
from ...errors import GammatuneError, Interrupted, InvalidParameter
from . import examine as dr
from ..live import protocol
from ..report.files import write_json
from ..args import DOCTOR_VERIFY_PROMPTS as VERIFY_PROMPTS
from ..sim import trace_record
from ..deploy.report import DeployAdvice, print_advice
from .report import (
    Recommendation, VerifyResult, VerifyRow, _finite, costs_table, methods_table, payload, ranking_table,
    recommend, verdict_lines, verify_table,
)
from ..modes.common import progress_bar, quiet_transformers

if TYPE_CHECKING:   # loaded where used (--for, --server-log, --batch), as before
    from ..batch_prices import BatchCosts
    from ..deploy.concurrency import Concurrency
    from ..deploy.engines import Engine
    from ..deploy.server_log import ServerLog
    from ..deploy.server_view import ServerView



class NothingExamined(GammatuneError):
    """Every candidate was refused: one line, exit 2."""


def run_doctor(console: Console, err: Console, cfg: dr.DoctorConfig, candidates: Sequence[dr.Candidate], *,
               json_path: Path | None = None, verify: bool = False, extra_args: Sequence[str] = (),
               engines: Sequence[Engine] = (), costs: tuple[float, float] | None = None,
               server_log: tuple[ServerLog, str] | None = None, batches: Sequence[int] = (),
               batch_costs: BatchCosts | None = None) -> int:
    """Examines every candidate, prints the ranking and the advice; returns the exit status.

    With `engines` (bench/deploy/engines.py rows) the draft it would ship is also played under each engine's own
    rules (`--for`), priced by `costs` (draft ms, verify ms) when given; with `server_log` (a parsed
    bench/deploy/server_log.ServerLog and its file name) that draft's acceptance is set beside the server's.
    With `batches` (or a server's own prices per batch size, `batch_costs`) that draft is priced at each batch size
    (`--batch`): the best K at each, and where speculation stops paying.
    After a Ctrl+C the partial ranking is printed and saved, then `Interrupted` says what was kept."""
    quiet_transformers()
    created = time.time()
    loads = [load_average()]   # and again at the end: a busy machine makes the verdict unsafe (busy.py)
    config = {"target": cfg.target, "drafts": [c.label for c in candidates], "prompts": [p.id for p in cfg.prompts],
              "max_new_tokens": cfg.max_new_tokens, "gammas": list(cfg.gammas), "greedy": cfg.sampling.greedy,
              "sampling": cfg.sampling.to_json(), "timing_passes": TIMING_PASSES,
              "default_gamma0": dr.DEFAULT_GAMMA0, "worth_it_above": dr.WORTH_IT}
    reports: list[dr.DraftReport] = []
    rec: Recommendation | None = None
    checked: VerifyResult | None = None
    deploy: DeployAdvice | None = None
    server: ServerView | None = None
    conc: Concurrency | None = None

    def save(complete: bool) -> None:
        if json_path is None:
            return
        try:
            data = payload(reports, rec, checked, config=config, complete=complete,
                           command=["gammatune", *sys.argv[1:]], created=created)
            if deploy is not None:
                data["deploy"] = _finite(deploy.to_json())
            if server is not None:
                data["server_log"] = _finite(server.to_json())
            if conc is not None:
                data["concurrency"] = _finite(conc.to_json())
            write_json(json_path, data)
        except OSError as exc:
            raise InvalidParameter(f"--json {json_path}: cannot write ({exc.strerror or exc})") from None

    save(False)  # at once: an unwritable path fails before any work, and an early Ctrl+C leaves a valid file
    plain: dict = {}
    measured: dict[str, dr.Measured] = {}
    interrupted = False
    units = cfg.units()
    with progress_bar(err) as prog:
        task = prog.add_task("doctor", total=len(candidates) * units + (VERIFY_PROMPTS * 2 + 1 if verify else 0))
        for i, cand in enumerate(candidates):
            def step(desc: str, n: float) -> None:
                prog.update(task, advance=n, description=_label(f"{cand.label[:24]}: {desc}"[:48]))

            try:
                report_, m = dr.examine(cand, cfg, step, plain)
            except KeyboardInterrupt:
                interrupted = True
                reports += [dr.DraftReport(c.label, c.path, c.built, status="interrupted") for c in candidates[i:]]
                break
            reports.append(report_)
            if m is not None:
                measured[report_.label] = m
                # the target's costs at their fastest over every pass so far: every examined draft re-priced
                for label, mm in zip(measured, dr.pooled(list(measured.values()))):
                    r = next(x for x in reports if x.label == label)
                    dr.simulate(r, mm.traces, mm.cost, cfg, mm.passes, mm.prefill_s)
            prog.update(task, completed=(i + 1) * units)
            save(False)
        if not interrupted and not any(r.examined for r in reports):
            save(True)
            raise NothingExamined("no candidate draft can be used with this target: " +
                                  "; ".join(f"{r.label}: {r.reason}" for r in reports))
        rec = recommend(reports, candidates, extra_args, cfg.sampling)
        if verify and not interrupted and rec.command:
            cand = next(c for c in candidates if c.label == rec.label)
            top = next(r for r in reports if r.label == rec.label)
            try:
                checked = verify_live(cfg, cand, top,
                                      lambda desc, n: prog.update(task, advance=n, description=_label(desc[:48])))
            except KeyboardInterrupt:
                interrupted = True
        shipped = _shipped(candidates, reports, rec, measured) if not interrupted else None
        if shipped is not None and engines:
            from ..deploy.advise import advise

            deploy = advise(cfg.target, shipped[0].path, shipped[1], engines, cfg.gammas, cfg.max_new_tokens, cfg.law,
                            costs)
        if shipped is not None and server_log is not None:
            from ..deploy.advise import prices_for
            from ..deploy.server_view import view

            server = view(server_log[0], server_log[1], shipped[0].path, shipped[1].traces,
                          prices_for(shipped[1], costs), cfg.max_new_tokens)
            from .pitfalls_data import data_pitfalls

            server.pitfalls, server.unchecked = data_pitfalls(server)
        if shipped is not None and (batches or batch_costs is not None):
            from .batch import concurrency

            try:
                conc = concurrency(cfg, shipped[0], shipped[1], batches, batch_costs,
                                   lambda desc: prog.update(task, description=_label(desc[:48])))
            except KeyboardInterrupt:
                interrupted = True
    loads.append(load_average())
    reasons = busy_reasons(reports, loads)
    config["unsafe_because"] = reasons
    _print(console, reports, rec, checked, cfg.law)
    warning = busy_warning(reasons)
    if warning:
        console.print(Text(warning, style="bold yellow"))
    if deploy is not None:
        print_advice(console, deploy)
    if server is not None:
        from ..deploy.server_view import render as render_server

        console.print(render_server(server))
    if conc is not None:
        from ..deploy.concurrency_report import print_concurrency

        print_concurrency(console, conc, cfg.target, shipped[0].path if shipped else "",
                          {e.name for e in engines} or {"vllm", "sglang"})
    if verify and not (rec and rec.command):
        err.print(Text("--verify: nothing to run live (no draft is recommended)", style="yellow"))
    save(not interrupted)
    if interrupted:   # the CLI's one line, as run and bench say it: "gammatune: interrupted — …", exit 130
        done = sum(r.examined for r in reports)
        raise Interrupted(f"a partial report ({done} of {len(candidates)} drafts examined)"
                          + (f"; {json_path} holds it" if json_path else ""))
    if json_path is not None:
        err.print(Text(f"wrote {json_path}"))
    return 0


def _shipped(candidates: Sequence[dr.Candidate], reports: Sequence[dr.DraftReport], rec: Recommendation | None,
             measured: dict[str, dr.Measured]) -> tuple[dr.Candidate, dr.Measured] | None:
    """The draft `--for` and `--server-log` speak of: the recommended one, else the fastest examined draft a user
    could run (not one built for the check), with its measurement priced like every other draft's."""
    pooled = dict(zip(measured, dr.pooled(list(measured.values()))))
    label = rec.label if rec is not None and rec.command else next(
        (r.label for r in dr.rank(reports) if r.examined and not r.built and r.label in pooled), "")
    if not label:
        return None
    return next(c for c in candidates if c.label == label), pooled[label]


def _label(text: str) -> str:
    """A progress description from user text (paths, prompt ids): printable, and never read as markup."""
    return escape("".join(ch if ch.isprintable() else "?" for ch in text))


def _print(console: Console, reports: Sequence[dr.DraftReport], rec: Recommendation | None,
           checked: VerifyResult | None, law: str = "greedy") -> None:
    console.print(ranking_table(reports, law))
    console.print(verdict_lines(reports), end="")
    if any(r.examined for r in reports):
        console.print(methods_table(reports))
        console.print(costs_table(reports))
    fragile = sum(r.fragile for r in reports if r.examined)
    if fragile:
        console.print(Text(f"note: {fragile} near-tie position(s) in the traces; a live run may diverge there",
                           style="yellow"))
    if rec is not None:
        console.print(Text(rec.text, style="bold"))
    if checked is not None:
        console.print(verify_table(checked))
        ratio = checked.measured / checked.predicted if checked.predicted else float("nan")
        console.print(Text(f"measured {checked.measured:.2f}× vs predicted {checked.predicted:.2f}× "
                           f"(measured/predicted {ratio:.2f}); timings on a shared machine move by 10% or more",
                           style="bold"))


def verify_live(cfg: dr.DoctorConfig, cand: dr.Candidate, top: dr.DraftReport, progress: dr.Progress) -> VerifyResult:
    """The recommendation live on the first few prompts, each beside target-only decoding of the same prompt."""
    pair = dr.load(cfg, cand)
    device = str(pair.device)
    out = VerifyResult(top.label, top.best_method, top.best_gamma)
    try:
        settings = grid_settings(top.best_method, top.best_gamma)  # with the bounds that keep γ0, as recommended
        sampled = not cfg.sampling.greedy
        pid = [protocol.PromptIds(p.id, pair.encode_prompt(p.text, raw=cfg.raw)) for p in cfg.prompts[:VERIFY_PROMPTS]]
        protocol.warm_up(pair, pid[0], protocol.SweepConfig(methods=[top.best_method], gammas=[top.best_gamma],
                                                            max_new_tokens=16, baselines=(protocol.PLAIN,)))
        progress("verify: warm-up", 1)
        plain_pred_s = pred_s = plain_s = spec_s = 0.0
        plain_tok = spec_tok = 0
        for p in pid:
            toks, _, t_plain = trace_record.target_run(pair, p.ids, cfg.max_new_tokens, pair.eos_ids)
            progress(f"verify {p.id}: target alone", 1)
            rec = protocol.run_policy(pair, settings, p, cfg.max_new_tokens,
                                      sampling=cfg.sampling if sampled else None)
            progress(f"verify {p.id}: {top.best_method}", 1)
            plain_tok_s, spec_tok_s = len(toks) / t_plain, rec.tokens / rec.wall_s
            out.rows.append(VerifyRow(p.id, top.per_prompt.get(p.id, float("nan")), spec_tok_s / plain_tok_s,
                                      None if sampled else rec.output_ids == toks, plain_tok_s, spec_tok_s))
            pl, pr = top.prompt_seconds.get(p.id, [float("nan"), float("nan")])
            plain_pred_s, pred_s = plain_pred_s + pl, pred_s + pr
            plain_s, spec_s = plain_s + t_plain, spec_s + rec.wall_s
            plain_tok, spec_tok = plain_tok + len(toks), spec_tok + rec.tokens
        # over the prompts run: Σ tokens / Σ seconds, speculative over target-only (predicted: the same tokens)
        out.predicted = plain_pred_s / pred_s if pred_s > 0 else float("nan")
        out.measured = (spec_tok / spec_s) / (plain_tok / plain_s) if spec_s > 0 and plain_s > 0 else float("nan")
    finally:
        del pair
        dr.free_memory(device)
    return out


__all__ = ["run_doctor", "verify_live", "NothingExamined", "VERIFY_PROMPTS"]
