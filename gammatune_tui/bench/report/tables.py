"""Turning benchmark cells into the paper's tables and a Figure-1-like chart (files.py writes them out).

The arithmetic (`table2`, `speedups_over`, `engine_vs_hf`) is plain Python so
it can be checked by hand; the rendering uses Rich and never puts user or
model text into markup strings.

When the simulator adds the hindsight-optimal γ (`oracle`, bench/sim/oracle.py),
it is Table 2's top row and every method gets a "share of oracle" column: its
throughput over the oracle's on the same traces (1.00 = as fast as the oracle).

Standard deviations are *population* standard deviations (ddof = 0, numpy's
default): the spread is over the complete set of γ0 values that was swept, not
an estimate from a sample of them. `specdecode` therefore reads exactly
1.00 ± its own spread, as docs/spec.md §5 and the paper's Table 2 do.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...engine.policies import METHODS, grouped_methods
from ..sim.oracle import ORACLE, OracleSummary, Regret
from ..results import BASELINES, HF_CONSTANT, HF_HEURISTIC, HF_LOOKUP, PLAIN, Cell
from .columns import Column, print_fitted

PAPER_TABLE2 = {  # the paper's "Average" column, for side-by-side printing
    "specdecode": (1.00, 0.23),
    "hf-heuristic": (1.11, 0.12),
    "assistant-threshold": (1.13, 0.06),
    "gammatune": (1.15, 0.05),
    "gammatune+": (1.16, 0.03),
}


@dataclass(frozen=True)
class Speedup:
    """Mean ± population std of a ratio across γ0, plus the per-γ0 ratios."""

    mean: float
    std: float
    per_gamma: dict[int | None, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "std": self.std,
                "per_gamma": {("plain" if g is None else str(g)): v for g, v in self.per_gamma.items()}}

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.std:.2f}×"


def mean_std(values: Iterable[float]) -> tuple[float, float]:
    vals = list(values)
    if not vals:
        return math.nan, math.nan
    return statistics.fmean(vals), statistics.pstdev(vals) if len(vals) > 1 else 0.0


def table2(thr: dict[str, dict[int | None, float]], baseline: str = "specdecode",
           gammas: Iterable[int] | None = None) -> dict[str, Speedup]:
    """The paper's Table 2 for one pair (docs/spec.md §5).

    For each γ0: throughput(M, γ0) / mean over γ0 of throughput(baseline, γ0);
    reported as mean ± std across γ0. A method measured without γ0 (plain
    decoding) gets its single ratio and std 0.
    """
    if baseline not in thr or not thr[baseline]:
        raise ValueError(f"Table 2 needs the {baseline!r} runs")
    base = thr[baseline]
    gs = [g for g in (gammas if gammas is not None else base) if g in base]
    denom = statistics.fmean(base[g] for g in gs)
    out: dict[str, Speedup] = {}
    for method, by_g in thr.items():
        if None in by_g and len(by_g) == 1:
            r = by_g[None] / denom if denom > 0 else math.nan
            out[method] = Speedup(r, 0.0, {None: r})
            continue
        ratios = {g: by_g[g] / denom if denom > 0 else math.nan for g in gs if g in by_g}
        m, s = mean_std(ratios.values())
        out[method] = Speedup(m, s, ratios)
    return out


def speedups_over(thr: dict[str, dict[int | None, float]], baseline: str,
                  gammas: Iterable[int] | None = None) -> dict[str, Speedup]:
    """throughput(M, γ0) / throughput(baseline): mean ± std across γ0 (baseline without γ0, e.g. plain)."""
    if baseline not in thr or not thr[baseline]:
        return {}
    base = statistics.fmean(thr[baseline].values())
    out: dict[str, Speedup] = {}
    for method, by_g in thr.items():
        if method == baseline:
            continue
        if set(by_g) == {None}:  # measured without γ0 (the oracle): its single ratio
            out[method] = Speedup(by_g[None] / base, 0.0, {None: by_g[None] / base})
            continue
        ratios: dict[int | None, float] = {g: v / base for g, v in by_g.items()
                                           if g is not None and (gammas is None or g in set(gammas))}
        if ratios:
            out[method] = Speedup(*mean_std(ratios.values()), ratios)
    return out


# our policy ↔ transformers' schedule at matched settings (a prompt-lookup sweep: specdecode ↔ its fixed window)
MATCHED_HF = {"hf-heuristic": HF_HEURISTIC, "assistant-threshold": HF_CONSTANT, "specdecode": HF_LOOKUP}


def engine_vs_hf(thr: dict[str, dict[int | None, float]]) -> dict[str, Speedup]:
    """Our engine over transformers' assisted generation, same schedule and γ0."""
    out: dict[str, Speedup] = {}
    for ours, theirs in MATCHED_HF.items():
        a, b = thr.get(ours, {}), thr.get(theirs, {})
        ratios = {g: a[g] / b[g] for g in a if g in b and b[g] > 0}
        if ratios:
            out[ours] = Speedup(*mean_std(ratios.values()), ratios)
    return out


def share_of_oracle(t2: dict[str, Speedup]) -> dict[str, Speedup]:
    """Each row of Table 2 over the oracle's: the share of the oracle's throughput (mean ± std across γ0)."""
    if ORACLE not in t2 or not t2[ORACLE].mean > 0:
        return {}
    o = t2[ORACLE].mean
    return {m: Speedup(s.mean / o, s.std / o, {g: v / o for g, v in s.per_gamma.items()})
            for m, s in t2.items() if m != ORACLE}


def method_order(names: Iterable[str]) -> list[str]:
    order = [ORACLE] + list(METHODS) + list(BASELINES)
    names = list(dict.fromkeys(names))
    return [n for n in order if n in names] + [n for n in names if n not in order]


_GROUP = {m: words for words, names in grouped_methods() for m in names}


def group_ends(order: list[str]) -> set[str]:
    """The rows after which a table draws a line: where the method group changes (the paper's, peers',
    gammatune's own; the oracle before them and the baselines after them are groups of their own)."""
    return {a for a, b in zip(order, order[1:]) if _GROUP.get(a, a) != _GROUP.get(b, b)}


# -- rendering ----------------------------------------------------------------------


def render_table2(t2: dict[str, Speedup], over_plain: dict[str, Speedup], pair_label: str,
                  paper: bool = True, title: str = "Table 2") -> Table:
    table = Table(title=Text(f"{title}: speedup over specdecode (mean ± std across γ0) — {pair_label}"),
                  title_justify="left")
    table.add_column("method", no_wrap=True)
    table.add_column("× specdecode", justify="right")
    table.add_column("× target-only", justify="right")
    shares = share_of_oracle(t2)
    if shares:
        table.add_column("share of oracle", justify="right")
    if paper:
        table.add_column("paper (avg of 4 pairs)", justify="right")
    order = method_order(t2)
    ends = group_ends(order)
    for m in order:
        row = [Text(m), Text(str(t2[m]))]
        row.append(Text(str(over_plain[m]) if m in over_plain else "—"))
        if shares:
            row.append(Text(f"{shares[m].mean:.2f} ± {shares[m].std:.2f}" if m in shares else "1.00"))
        if paper:
            p = PAPER_TABLE2.get(m)
            row.append(Text(f"{p[0]:.2f} ± {p[1]:.2f}×" if p else ""))
        table.add_row(*row, end_section=m in ends)
    return table


def render_methods(cells: dict[tuple[str, int | None], Cell], gammas: list[int], max_positions: int = 6) -> Table:
    """Per method and γ0: tokens/s, α, tokens/step and per-position acceptance."""
    table = Table(title=Text("Per method and γ0"), title_justify="left")
    for col, just in (("method", "left"), ("γ0", "right"), ("tok/s", "right"), ("α", "right"),
                      ("tok/step", "right"), ("per-position acceptance (1..)", "left")):
        wrap = col.startswith("per-position")
        table.add_column(col, justify=just, no_wrap=not wrap, min_width=None if wrap else len(col))  # type: ignore[arg-type]
    methods = method_order(m for m, _ in cells)
    for m in methods:
        keys = [(m, g) for g in ([None] + list(gammas)) if (m, g) in cells]
        for i, key in enumerate(keys):
            c = cells[key]
            pp = " ".join(f"{p:.2f}" for p in c.per_position[:max_positions])
            if len(c.per_position) > max_positions:
                pp += " …"
            table.add_row(Text(m if i == 0 else ""), Text("—" if key[1] is None else str(key[1])),
                          Text(f"{c.throughput:.1f}"), Text(f"{c.acceptance_rate:.3f}" if c.drafted else "—"),
                          Text(f"{c.tokens_per_step:.2f}" if c.steps else "—"), Text(pp))
        table.add_section()
    return table


def render_summary(thr: dict[str, dict[int | None, float]]) -> Table:
    """One line per method: mean tokens/s over γ0, its std, the best and worst γ0.

    A method run at one γ0 has no spread and nothing to rank ("best γ0 1 (369)
    / worst γ0 1 (369)" read as two findings): its row shows
    that γ0 once; when no method ran at more than one, the table is one column
    of γ0 beside the tokens/s.
    """
    several = any(len([g for g in by_g if g is not None]) > 1 for by_g in thr.values())
    if not several:
        table = Table(title=Text("Throughput (one γ0 per method)"), title_justify="left")
        for col in ("method", "γ0", "tok/s"):
            table.add_column(col, justify="left" if col == "method" else "right", no_wrap=col == "method")
        for m in method_order(thr):
            by_g = thr[m]
            g = next((g for g in by_g if g is not None), None)
            value = next(iter(by_g.values()), math.nan)
            table.add_row(Text(m), Text("—" if g is None else str(g)), Text(f"{value:.1f}"))
        return table
    table = Table(title=Text("Throughput across γ0"), title_justify="left")
    for col in ("method", "mean tok/s", "std", "best γ0", "worst γ0"):
        table.add_column(col, justify="left" if col == "method" else "right", no_wrap=col == "method")
    order = method_order(thr)
    ends = group_ends(order)
    for m in order:
        by_g = thr[m]
        mean, std = mean_std(by_g.values())
        gs = [g for g in by_g if g is not None]
        best = max(gs, key=lambda g: by_g[g]) if gs else None
        worst = min(gs, key=lambda g: by_g[g]) if len(gs) > 1 else None
        table.add_row(Text(m), Text(f"{mean:.1f}"), Text(f"{std:.1f}" if len(by_g) > 1 else "—"),
                      Text("—" if best is None else f"{best} ({by_g[best]:.0f})" + ("" if worst is not None else ", only")),
                      Text("—" if worst is None else f"{worst} ({by_g[worst]:.0f})"), end_section=m in ends)
    return table


_BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(value: float, scale: float, width: int) -> str:
    """A horizontal bar of `value` on a `width`-cell axis that ends at `scale`, in eighths of a cell."""
    if scale <= 0 or not math.isfinite(value) or value <= 0:
        return ""
    eighths = int(round(min(value, scale) / scale * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (_BLOCKS[part] if part else "")


def render_bars(thr: dict[str, dict[int | None, float]], width: int = 40, title: str = "Average throughput (tok/s)") -> Text:
    """The paper's Figure 1 for one pair: mean tokens/s per method, with ±std whiskers across γ0."""
    rows = []
    for m in method_order(thr):
        mean, std = mean_std(thr[m].values())
        rows.append((m, mean, std))
    scale = max((mu + sd for _, mu, sd in rows if math.isfinite(mu)), default=0.0)
    label_w = max((len(m) for m, _, _ in rows), default=0)
    out = Text(f"{title}\n", style="bold")
    for m, mu, sd in rows:
        b = bar(mu, scale, width)
        hi = int(round((mu + sd) / scale * width)) if scale else 0
        whisker = ""
        if sd > 0 and hi > len(b):
            whisker = "─" * max(0, hi - len(b) - 1) + "┤"
        out.append(f"{m:<{label_w}} ")
        style = "green" if m.startswith("gammatune") else ("grey50" if m in BASELINES or m == ORACLE else "blue")
        out.append(b, style=style)
        out.append(whisker, style="grey50")
        pad = width + 1 - len(b) - len(whisker)
        out.append(" " * max(1, pad))
        out.append(f"{mu:8.1f} ± {sd:.1f}\n" if sd > 0 else f"{mu:8.1f}\n")
    return out


def regret_columns(regret: dict[str, Regret]) -> list[Column]:
    """Share of the oracle's throughput per method, overall and per prompt category (mean ± std across γ0).

    As `table_fit` columns, so at 80 columns the categories wrap or split into
    parts (each repeating the method) instead of cutting every share to "0.…".
    """
    cats = sorted({c for r in regret.values() for c in r.per_category})
    names = method_order(regret)
    cols = [Column("method", [Text(m) for m in names], justify="left", key=True),
            Column("all prompts", [Text(str(regret[m])) for m in names])]
    for c in cats:
        cols.append(Column(c, [Text(f"{regret[m].per_category[c]:.2f}" if c in regret[m].per_category else "—")
                               for m in names]))
    return cols


REGRET_TITLE = "Share of the oracle's throughput (1.00 = as fast as the hindsight-optimal γ)"


def render_oracle(summary: OracleSummary, plain_steps: int) -> Table:
    """The oracle's own numbers: tokens per step, mean window, how often it skips drafting, modelled speed."""
    t = Table(title=Text(f"The oracle over {summary.prompts} prompts (hindsight-optimal window at every step; "
                         "a bound, not a method; modelled)"), title_justify="left")
    for c in ("tokens", "steps", "tok/step", "mean window", "w = 0", "tok/s", "× target-only"):
        t.add_column(c, justify="right")
    t.add_row(str(summary.tokens), str(summary.steps), f"{summary.tokens_per_step:.2f}", f"{summary.mean_window:.2f}",
              str(plain_steps), f"{summary.throughput:.1f}", f"{summary.speedup_over_plain:.2f}×")
    return t


def print_report(console: Console, cells: dict[tuple[str, int | None], Cell], gammas: list[int],
                 pair_label: str, title: str = "Table 2", regret: dict[str, Regret] | None = None) -> dict[str, Any]:
    """Prints every table and the chart; returns the derived numbers for the JSON file.

    `regret` (bench/sim/oracle.py's `regret`, with the prompts' categories) adds the
    share-of-oracle table per prompt category.
    """
    from ..results import throughputs

    thr = throughputs(cells)
    derived: dict[str, Any] = {}
    console.print(render_methods(cells, gammas))
    console.print(render_summary(thr))
    if "specdecode" in thr:
        t2 = table2(thr, gammas=gammas)
        plain = speedups_over(thr, PLAIN, gammas) if PLAIN in thr else {}
        console.print(render_table2(t2, plain, pair_label, title=title))
        derived["table2"] = {m: s.to_json() for m, s in t2.items()}
        derived["speedup_over_target_only"] = {m: s.to_json() for m, s in plain.items()}
        if ORACLE in t2:
            derived["share_of_oracle"] = {m: s.to_json() for m, s in share_of_oracle(t2).items()}
    if regret:
        print_fitted(console, REGRET_TITLE, regret_columns(regret))
        derived["regret"] = {m: r.to_json() for m, r in regret.items()}
    vs = engine_vs_hf(thr)
    if vs:
        t = Table(title=Text("Our engine vs transformers' assisted generation or prompt lookup (same schedule, same γ0)"),
                  title_justify="left")
        t.add_column("ours")
        t.add_column("transformers")
        t.add_column("speedup (mean ± std across γ0)", justify="right")
        for ours, s in vs.items():
            t.add_row(Text(ours), Text(MATCHED_HF[ours]), Text(str(s)))
        console.print(t)
        derived["engine_vs_hf"] = {m: s.to_json() for m, s in vs.items()}
    console.print(render_bars(thr))
    derived["throughput"] = {m: {("plain" if g is None else str(g)): v for g, v in by_g.items()}
                             for m, by_g in thr.items()}
    return derived
