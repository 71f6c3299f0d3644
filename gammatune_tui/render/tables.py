"""Summary tables and lines shared by the TUI and the commands: compare's ranking, a run's totals."""

from __future__ import annotations

from typing import Any, Iterator

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from ..engine.events import SessionHeader, SessionSummary
from ..engine.policies import METHODS, used_params
from ..session.compare import CompareSummary, SummaryRow, backfire
from ..session.hindsight import Hindsight
from .safe_text import printable
from .table_fit import set_keys


def shown_params(params: dict[str, Any], method: str | None = None) -> Iterator[tuple[str, Any]]:
    """A header's policy parameters worth showing: set ones, without γ0 (shown apart) and an unset dynamic τ.

    Given the `method`, only the parameters it reads (specdecode: none).
    """
    used = set(used_params(method)) if method in METHODS else None
    for k, v in params.items():
        if v is not None and k != "gamma0" and not (k == "dynamic_tau" and v is False) \
                and (used is None or k in used):
            yield k, v


def as_flag(name: str, value: object) -> str:
    """A header's parameter as the flag that sets it: `top_p`, 0.9 → `--top-p 0.9`; a true switch alone."""
    flag = "--" + name.replace("_", "-")
    return flag if value is True else f"{flag} {value}"


def _speed(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def _times(x: float | None) -> str:
    return f"{x:.2f}×" if x is not None else "–"


def _rank(r: SummaryRow) -> str:
    if r.rank is None:
        return "–"
    return f"{r.rank}=" if r.tied else str(r.rank)


# compare's optional columns, the first dropped first when the table is wider than the screen
_DROP_ORDER = ("tokens", "calls t/d", "tok/step", "α", "× specdecode")


def summary_table(summary: CompareSummary, width: int | None = None) -> Table:
    """Compare's methods by median tokens/s, with the spread, the ranks the spread allows and the speedups.

    Given a `width` (the TUI's pane), optional columns (tokens, calls,
    tokens/step, α, the speedup over specdecode) are left out, in that order,
    until the table fits, and the caption names them; without one every column is kept, and a
    `FittingConsole` splits the table rather than cut a value.
    """
    rows = summary.rows
    has_plain = any(r.reference for r in rows)
    one_length = len({r.tokens for r in rows}) <= 1
    columns: dict[str, list[str | Text]] = {
        "#": [_rank(r) for r in rows],
        "method": [Text(printable(r.label), style="dim" if r.reference else "") for r in rows],
        "tok/s": [_speed(r.tokens_per_s) for r in rows],
        "spread": [f"{_speed(r.low)}–{_speed(r.high)}" if r.runs > 1 else "–" for r in rows],
    }
    if has_plain:
        columns["× target"] = [_times(r.over_plain) for r in rows]
    columns["× specdecode"] = [_times(r.speedup) for r in rows]
    # a row that drafted nothing has no acceptance to show: "0.00" would read as every draft rejected
    columns["α"] = ["–" if r.reference or r.drafted == 0 else f"{r.acceptance_rate:.2f}" for r in rows]
    columns["tok/step"] = [f"{r.tokens_per_step:.2f}" for r in rows]
    columns["calls t/d"] = [f"{r.target_calls}/{r.draft_calls}" for r in rows]
    if not one_length:
        columns["tokens"] = [str(r.tokens) for r in rows]
    dropped: list[str] = []
    if width is not None:
        for name in _DROP_ORDER:
            if _table_width(columns) <= width:
                break
            if columns.pop(name, None) is not None:
                dropped.append(name)

    if summary.ranked:
        title = f"compare: ranked by tokens/s (median of {summary.runs} runs)"
        notes = ["spread = slowest–fastest run; # = 1 + the rows clearly faster, whose slowest run beats this row's "
                 "fastest (= shared rank: closer than the spread)"]
        medians = [r.tokens_per_s for r in summary.rows]
        if any(a < b for a, b in zip(medians, medians[1:])):
            notes.append("rows are in # order, then by median: a row may sit below a slower median when a row above "
                         "beat it clearly and the slower row's spread overlaps both")
    else:
        title = "compare: tokens/s (one run each: not ranked)"
        notes = ["one run per method has no spread, so no ranking: use --repeats 3 or more"]
    if "× target" in columns:
        notes.append("× target = over target-only decoding")
    if "× specdecode" in columns:
        notes.append(f"× specdecode = over {summary.baseline}" if summary.baseline
                     else "× specdecode needs specdecode among the methods")
    if one_length and rows:
        notes.append(f"{rows[0].tokens} tokens each")
    if dropped:   # never without a word: the reader learns what this width hides, and where to see it
        notes.append(f"left out at this width: {', '.join(dropped)} (a wider window, or compare --print, "
                     "shows every column)")
    if summary.models:
        notes.append("models: " + ", ".join(printable(m) for m in summary.models))
    table = Table(title=title, title_justify="left", caption="; ".join(notes), caption_justify="left",
                  show_edge=False, pad_edge=False)
    for name in columns:
        table.add_column(name, justify="left" if name == "method" else "right", no_wrap=True)
    for i in range(len(rows)):
        table.add_row(*(cells[i] for cells in columns.values()))
    return set_keys(table, 2)   # split for a narrow console: every part keeps "#" and "method"


def _table_width(columns: dict[str, list[str | Text]]) -> int:
    """Cells' widest text per column plus the 3-character separators (no outer edge)."""
    widths = [max([cell_len(name)] + [cell_len(str(c)) for c in cells]) for name, cells in columns.items()]
    return sum(widths) + 3 * (len(widths) - 1)


def verdict(summary: CompareSummary) -> str:
    """One line for the end of a race: who is fastest, as far as the spread allows saying so."""
    methods = summary.methods
    if not methods:
        return "nothing measured"
    best = methods[0]
    line = f"fastest median: {best.label}, {best.tokens_per_s:,.1f} tok/s"
    if best.over_plain is not None:
        line += f" ({best.over_plain:.2f}× target-only)"
    if not summary.ranked:
        return line + "; one run each, so not ranked"
    leaders = summary.leaders
    if len(leaders) > 1:
        others = [r.label for r in leaders if r.label != best.label]
        line += f"; tied within the spread with {', '.join(others)}"
    ref = next((r for r in summary.rows if r.reference), None)
    if ref is not None and ref.rank is not None and best.rank is not None and ref.rank < best.rank:
        line += "; target-only decoding is faster still"
    elif backfire(summary):
        line += "; no method clearly faster than target-only decoding"
    return line


def backfire_text(summary: CompareSummary) -> Text | None:
    """The backfire warning under a race's table, when speculation did not pay (session/compare.py `backfire`)."""
    note = backfire(summary)
    return Text(note, style="yellow") if note else None


def lossless_text(summary: CompareSummary) -> Text:
    """Compare's greedy check: green when every method gave the same tokens, red for a fault, yellow for a
    low-precision near-tie (or a difference no target-only logits could judge), dim when sampling."""
    verdict = summary.lossless
    style = ("green" if verdict.identical else "bold red" if verdict.fault
             else "yellow" if verdict.checked else "dim")
    return Text(printable(verdict.message), style=style)


def run_summary_table(s: SessionSummary, header: SessionHeader | None = None) -> Table:
    """`gammatune run`'s closing table: one session's totals, and which source drafted.

    A drafting model is named with its precision from the session's header
    (`model (int4 g32)` for a self-draft), so a self-draft is not read as the
    pair's own draft model.
    """
    drafter = s.drafter or "model"
    if drafter == "model" and header is not None and header.draft_precision:
        drafter = f"model ({header.draft_precision})"
    table = Table(title="run summary", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("tokens", "steps", "α", "tok/step", "tokens/s", "target calls", "draft calls", "drafter", "stop"):
        table.add_column(col, justify="right" if col not in ("stop", "drafter") else "left")
    table.add_row(
        str(s.tokens), str(s.steps), f"{s.acceptance_rate:.2f}", f"{s.tokens_per_step:.2f}",
        f"{s.tokens_per_s:.1f}", str(s.target_calls), str(s.draft_calls), printable(drafter),
        s.stop_reason,
    )
    return table


def acceptance_text(sd: dict) -> Text:
    """The line under `run`'s summary: the session in vLLM's terms, to hold beside a server's own metrics."""
    per = " ".join(f"{x:.2f}" for x in sd["per_position_acceptance_rate"][:8])
    return Text(f"in vLLM's terms: mean acceptance length {sd['mean_acceptance_length']:.2f} · draft acceptance rate "
                f"{sd['draft_acceptance_rate']:.2f} · per-position acceptance rate {per or '—'} "
                f"({sd['num_spec_steps']} spec steps; docs/deploy.md maps SGLang's and llama.cpp's names)",
                style="dim")


def hindsight_text(h: Hindsight | None) -> Text:
    """The line under `run`'s summary: how close the session came to the oracle (or why it cannot say)."""
    if h is None:
        return Text("")
    return Text(printable(h.line()), style="" if h.applicable else "dim")
