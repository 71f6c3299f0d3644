"""What `gammatune doctor` prints and saves: the ranking, every method per draft, the costs, the advice.

Plain functions from `DraftReport`s to Rich tables and to one JSON payload,
so a partial run (Ctrl+C) renders and saves exactly like a complete one.
Labels and paths are user input: they reach the terminal only as `Text`.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from rich.table import Table
from rich.text import Text

from ...engine.policies import METHODS
from ...engine.common.kernel_path import native_bf16_cpu
from ...engine.common.names import is_self_draft
from ...engine.common.sampling_config import SamplingConfig
from ...engine.events.precision_text import human_bytes
from .examine import DEFAULT_GAMMA0, Candidate, DraftReport, rank
from .grid import bound_flags
from .step_split import split_line
from ..sim.ranks import gap_ranks
from ..sim.reference import BEST_FIXED, NO_SKIP, REFERENCES, SIGNAL

REFERENCE_LABELS = {BEST_FIXED: "best fixed γ (hindsight)", SIGNAL: "perfect signal (bound)",
                    NO_SKIP: "oracle, no skip (bound)"}


def size(n: int) -> str:
    """A parameter count the way model cards say it: 951k, 1.2M, 7.6B."""
    if n <= 0:
        return "—"
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            v = n / div
            return f"{v:.1f}{unit}" if v < 10 else f"{v:.0f}{unit}"
    return str(n)


def _x(v: float, digits: int = 2) -> str:
    return f"{v:.{digits}f}×" if math.isfinite(v) else "—"


def _xs(v: float, spread: float) -> str:
    """A speedup with its spread across timing passes: "1.23×±0.04"."""
    return f"{_x(v)}±{spread:.2f}" if math.isfinite(v) and spread > 0 else _x(v)


def draft_ranks(reports: Sequence[DraftReport]) -> dict[str, str]:
    """Examined drafts ranked by predicted speedup, tied where the gap is within the timing spread."""
    done = [r for r in reports if r.examined]
    return gap_ranks({r.label: r.predicted for r in done}, {r.label: r.predicted_spread for r in done})


def ranking_table(reports: Sequence[DraftReport], law: str = "greedy") -> Table:
    """The ranked table: each draft's numbers, best setting, predicted speedup with its spread, bound, verdict."""
    t = Table(title=Text(f"Drafts ranked by predicted speedup over the target alone ({law}, simulated)"),
              title_justify="left", caption=Text("α: the draft agrees with the target · run: tokens accepted per "
                                                 "step when drafting to the first miss · c: T_verify(1) / T_draft · "
                                                 "± : largest change when one timing pass prices it instead of the "
                                                 "pool · spread: lowest–highest prompt · #: tied (=) where the gap "
                                                 "is within ±"), caption_justify="left")
    for col, just in (("#", "right"), ("draft", "left"), ("size", "right"), ("α", "right"), ("run", "right"),
                      ("c", "right"), ("best", "left"), ("predicted", "right"), ("spread", "right"),
                      ("oracle", "right"), ("verdict", "left")):
        t.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    ranks = draft_ranks(reports)
    for r in rank(reports):
        style = _style(r)
        if not r.examined:
            t.add_row(Text("–"), Text(r.label), Text(_size(r)), *(Text("") for _ in range(7)),
                      Text(r.short_verdict, style=style or "dim"))
            continue
        lo, hi = r.spread
        t.add_row(Text(ranks[r.label]), Text(r.label), Text(_size(r)), Text(f"{r.agreement:.2f}"),
                  Text(f"{r.mean_run:.2f}"), Text(f"{r.c:.1f}"), Text(f"{r.best_method} γ0={r.best_gamma}"),
                  Text(_xs(r.predicted, r.predicted_spread)), Text(f"{lo:.2f}–{hi:.2f}"),
                  Text(_xs(r.oracle, r.oracle_spread)),
                  Text(r.short_verdict, style=style))
    return t


def _size(r: DraftReport) -> str:
    """'0.95M float32' for a draft model; 'int4 g32 +84 MB' for a self-draft (its parameters are the target's)."""
    if r.precision and is_self_draft(r.path):
        return f"{r.precision} +{human_bytes(r.weight_bytes)}"
    return f"{size(r.params)} {r.precision}".strip()


def _style(r: DraftReport) -> str:
    v = r.verdict
    return "green" if v == "worth it" else ("red" if v.startswith(("not worth", "refused")) else "")


def verdict_lines(reports: Sequence[DraftReport]) -> Text:
    """Each draft's verdict in full, with its reason: what the table's one word stands for."""
    out = Text()
    for r in rank(reports):
        out.append(Text(r.label, style="bold"))
        out.append(": ")
        out.append(Text(r.verdict, style=_style(r)))
        if r.examined:
            out.append(f" (predicted {_xs(r.predicted, r.predicted_spread)} with {r.best_method} "
                       f"γ0={r.best_gamma} over {r.passes} timing passes; "
                       f"no γ policy beats {_x(r.oracle)} with this draft)")
        out.append("\n")
        if r.step_ms:
            out.append(Text("  " + split_line(r.step_ms, r.verify_ms), style="dim"))
            out.append("\n")
    line = verify_cost_line(reports)
    if line:
        out.append(Text(line, style="dim"))
        out.append("\n")
    return out


CHEAP_VERIFY = 1.2
"""c(5) at or under this is a cheap verify. SmolLM2's: float32 1.65-1.89 through MKL, 1.38 with the packed
verify, bfloat16 on oneDNN's AMX path 1.09-1.27; at 1.38 in float32 bfloat16 still raced 1.46x target-only
against float32's 1.33x (docs/benchmarks-self-draft.md), so a packed float32 verify is not yet cheap."""


def verify_cost_line(reports: Sequence[DraftReport], k: int = 5) -> str:
    """The target's c(k), its precision and kernel path: what bounds every draft's speedup on this machine.

    A k-token verify that costs k steps (float32 on a CPU) leaves a draft little to win; one that costs
    little more than a step (bf16 on native hardware) is the shape speculation wants (docs/precision.md)."""
    done = [r for r in reports if r.examined and r.verify_ms.get(1)]
    if not done:
        return ""
    verify, m = done[0].verify_ms, done[0].machine
    k = k if k in verify else max(verify)
    c = verify[k] / verify[1]
    line = (f"the target's verify: c({k}) = {c:.2f} (a {k}-token pass costs {c:.2f} one-token passes) at "
            f"{m.get('dtype', '?')}, kernel path {m.get('kernel', '?')}")
    if str(m.get("device", "")) != "cpu":
        return line
    if m.get("dtype") == "bfloat16" and m.get("dtype_why"):
        line += (f"; bfloat16 is what --dtype auto runs {m['dtype_why'].removeprefix('auto ')} for a model whose "
                 "weights stream from memory, where a verify costs little more than a step: the greedy text is "
                 "bfloat16's, a near-tie named as one; --dtype float32 gives target.generate's exact text at "
                 "float32's price (docs/precision.md)")
    elif m.get("dtype") == "float32":
        line += "; float32: the greedy text is exactly target.generate's"
        if c > CHEAP_VERIFY and native_bf16_cpu():
            line += (f"; this CPU multiplies bfloat16 natively, where a verify costs little more than a step: try "
                     "--dtype bfloat16 (both models; its greedy text is bfloat16's, see docs/precision.md)")
        elif not native_bf16_cpu():
            line += " (--dtype auto keeps float32 on a CPU without native bfloat16, where bfloat16 is emulated)"
    return line


def methods_table(reports: Sequence[DraftReport]) -> Table:
    """Every method per examined draft: at its best γ0, and at the defaults (γ0 = 4, the shipped parameters)."""
    done = [r for r in rank(reports) if r.examined]
    t = Table(title=Text(f"Every method: × target alone at its best γ0 / at the defaults (γ0 = {DEFAULT_GAMMA0})"),
              title_justify="left")
    t.add_column("method", no_wrap=True)
    for r in done:
        t.add_column(Text(r.label), justify="right", overflow="fold")
    for m in METHODS:
        cells = []
        for r in done:
            res = next((x for x in r.methods if x.method == m), None)
            cells.append(Text(f"{_xs(res.best, res.best_spread)} γ0={res.best_gamma} / "
                              f"{_xs(res.at_default, res.at_default_spread)}" if res else "—",
                              style="bold" if res and m == r.best_method else ""))
        t.add_row(Text(m), *cells)
    for i, name in enumerate(REFERENCES):
        cells = []
        for r in done:
            ref = r.references[i] if i < len(r.references) else None
            cells.append(Text("—" if ref is None else _xs(ref[2], ref[3]) + (f" γ={ref[1]}" if ref[1] else ""),
                              style="italic"))
        t.add_row(Text(REFERENCE_LABELS[name], style="italic"), *cells)
    t.add_row(Text("oracle (bound)"), *(Text(_xs(r.oracle, r.oracle_spread)) for r in done))
    return t


def costs_table(reports: Sequence[DraftReport]) -> Table:
    """What a step costs on this machine: the target's pass over k tokens (its costs are pooled over every
    draft's timing pass, `doctor.pooled`), and each draft's cost per drafted token."""
    done = [r for r in rank(reports) if r.examined]
    t = Table(title=Text("Measured on this machine (ms; the fastest each timing pass saw)"), title_justify="left")
    if not done:
        return t
    verify = done[0].verify_ms
    ks = sorted(verify)
    t.add_column("model", overflow="fold")
    t.add_column("per token", justify="right")
    for k in ks:
        t.add_column(f"k={k}", justify="right")
    t.add_row(Text("target: a pass over k tokens"), Text(f"{verify.get(1, math.nan):.2f}"),
              *(Text(f"{verify[k]:.1f}") for k in ks))
    one = verify.get(1, math.nan)
    t.add_row(Text("c(k): that pass ÷ a one-token pass"), Text(""),
              *(Text(f"{verify[k] / one:.2f}" if one else "") for k in ks))
    for r in done:
        t.add_row(Text(f"draft: {r.label}"), Text(f"{r.draft_ms:.2f}"), *(Text("") for _ in ks))
    m = done[0].machine
    t.caption = Text(f"target alone: {done[0].plain_tok_s:.0f} tok/s (its k=1 pass, prefill included); "
                     f"target at {m.get('dtype', '?')}, kernel path {m.get('kernel', '?')}")
    t.caption_justify = "left"
    return t


@dataclass
class Recommendation:
    """What to run: the best examined draft that is worth it, as a command line; or why nothing is."""

    label: str = ""
    method: str = ""
    gamma0: int = 0
    predicted: float = math.nan
    command: str = ""
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["predicted"] = d["predicted"] if math.isfinite(self.predicted) else None
        return d


def recommend(reports: Sequence[DraftReport], candidates: Sequence[Candidate], extra: Sequence[str] = (),
              sampling: SamplingConfig | None = None) -> Recommendation:
    """The top "worth it" draft and its setting, with the `gammatune chat` line that runs it.

    Predictions are for greedy decoding unless `sampling` (a SamplingConfig)
    says otherwise, so the command asks for what was simulated
    (`--temperature 0`: the demo pair would otherwise sample). A γ0 outside
    the policy's default [γ_min, γ_max] comes with the bounds that keep it
    (as it was simulated). A draft whose prediction is within the timing
    spread of the target alone, or built for this check (a temporary folder),
    is never recommended.
    """
    by_label = {c.label: c for c in candidates}
    for r in rank(reports):
        cand = by_label.get(r.label)
        if not r.examined or cand is None or cand.args is None or r.predicted - r.predicted_spread < 1.0:
            continue
        parts = ["gammatune", "chat", *cand.args, *extra, "--method", r.best_method, "--gamma", str(r.best_gamma),
                 *bound_flags(r.best_method, r.best_gamma), *sampling_flags(sampling)]
        cmd = " ".join(shlex.quote(p) for p in parts)
        return Recommendation(r.label, r.best_method, r.best_gamma, r.predicted, cmd,
                              f"recommendation: {cmd}   (predicted {_xs(r.predicted, r.predicted_spread)} the "
                              f"target alone, {'greedy' if sampling is None or sampling.greedy else 'sampled'})")
    examined = [r for r in reports if r.examined]
    if not examined:
        return Recommendation(text="recommendation: none (no draft was examined)")
    how = "greedy" if sampling is None or sampling.greedy else "sampled"
    return Recommendation(text=f"recommendation: none of these drafts makes {how} decoding faster on this machine "
                               "beyond the timing spread; decode with the target alone, or try a smaller or "
                               "better-matched draft")


def sampling_flags(sampling: SamplingConfig | None) -> list[str]:
    """The chat flags that serve tokens as simulated: `--temperature 0`, or the temperature, top-k, top-p, seed."""
    if sampling is None or sampling.greedy:
        return ["--temperature", "0"]
    out = ["--temperature", f"{sampling.temperature:g}"]
    if sampling.top_k:
        out += ["--top-k", str(sampling.top_k)]
    return out + ["--top-p", f"{sampling.top_p:g}"]  # always: the demo pair's default top-p is 0.9


@dataclass
class VerifyRow:
    prompt_id: str
    predicted: float
    measured: float
    same_text: bool | None  # None: sampled, where live text is another sample
    plain_tok_s: float
    spec_tok_s: float


@dataclass
class VerifyResult:
    """`--verify`: the recommendation run live, prompt by prompt, beside target-only decoding."""

    label: str
    method: str
    gamma0: int
    rows: list[VerifyRow] = field(default_factory=list)
    predicted: float = math.nan   # over the prompts run: Σ target-only s / Σ predicted s
    measured: float = math.nan    # Σ target-only tok/s ratio, measured now

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def verify_table(v: VerifyResult) -> Table:
    t = Table(title=Text(f"--verify: {v.method} γ0={v.gamma0} with {v.label}, live, beside the target alone"),
              title_justify="left")
    for c in ("prompt", "predicted", "measured", "target alone", "speculative", "same text"):
        t.add_column(c, justify="left" if c == "prompt" else "right", overflow="fold")
    for r in v.rows:
        t.add_row(Text(r.prompt_id), Text(_x(r.predicted)), Text(_x(r.measured)), Text(f"{r.plain_tok_s:.0f} tok/s"),
                  Text(f"{r.spec_tok_s:.0f} tok/s"), Text("n/a (sampled)" if r.same_text is None else ("yes" if r.same_text else "no (float near-tie)")))
    t.add_row(Text("all", style="bold"), Text(_x(v.predicted), style="bold"), Text(_x(v.measured), style="bold"),
              Text(""), Text(""), Text(""))
    return t


def payload(reports: Sequence[DraftReport], rec: Recommendation | None, verify: VerifyResult | None, *,
            config: dict[str, Any], complete: bool, command: Sequence[str], created: float) -> dict[str, Any]:
    """The JSON file: valid after every draft, so an interrupted run leaves a partial but readable report."""
    env = {k: v for k, v in next((r.machine for r in reports if r.machine), {}).items()
           if k not in ("draft", "draft_params", "models")}  # the machine and the target; each draft is in its own entry
    return _finite({"schema": 1, "created": created, "command": list(command), "complete": complete, "config": config,
            "environment": env, "drafts": [r.to_json() for r in reports],
            "ranking": [r.label for r in rank(reports) if r.examined],
            "recommendation": rec.to_json() if rec else None, "verify": verify.to_json() if verify else None})


def _finite(obj: Any) -> Any:
    """JSON has no NaN or infinity: a number that could not be measured is null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
