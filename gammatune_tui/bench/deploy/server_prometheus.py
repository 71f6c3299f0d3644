"""`doctor --server-log` on a scrape of vLLM's Prometheus `/metrics`: the form most deployments already collect.

vLLM's spec-decode counters (vllm/v1/spec_decode/metrics.py, `SpecDecodingProm`; prometheus_client adds
`_total` to a counter's name):

    vllm:spec_decode_num_drafts_total                          steps that drafted
    vllm:spec_decode_num_draft_tokens_total                    tokens drafted
    vllm:spec_decode_num_accepted_tokens_total                 tokens accepted
    vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}   steps accepting the draft at position i

One label set per engine and model; they are summed. One scrape counts from
the server's start. A file holding two scrapes (`curl …/metrics > f; sleep
600; curl …/metrics >> f`: every series appears twice, in scrape order) is
read as their difference, the window between them. K is the number of
positions the server exports (it creates one series per position up to
`num_speculative_tokens`). What a scrape lacks, said under the verdict: it
has per-position counts but no per-step arrays, so a window K′ < K is
predicted in expectation from the per-position shares, not step by step.
"""

from __future__ import annotations

import math
import re

from .server_counts import NothingToGoOn, ServerLog

PREFIX = "vllm:spec_decode_"
DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POS = (PREFIX + n + "_total" for n in
                                           ("num_drafts", "num_draft_tokens", "num_accepted_tokens",
                                            "num_accepted_tokens_per_pos"))
REQUESTS = "vllm:request_success_total"
SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)(?:\s+-?\d+)?\s*$")
LABEL = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def is_scrape(text: str) -> bool:
    """Whether the text holds vLLM's spec-decode counters in the Prometheus text format."""
    return any(line.startswith(DRAFTS) for line in text.splitlines())


def read_scrape(text: str) -> ServerLog:
    """The counters of one scrape, or of two (their difference); ValueError naming what is wrong."""
    firsts: dict[tuple[str, tuple], float] = {}
    seconds: dict[tuple[str, tuple], float] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith(PREFIX) and not line.startswith(REQUESTS):
            continue
        m = SAMPLE.match(line)
        if m is None:
            raise ValueError(f"line {n} is not a Prometheus sample: {line[:80]!r}")
        try:
            value = float(m["value"])
        except ValueError:
            raise ValueError(f"line {n}: {m['name']} has the value {m['value']!r}, not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"line {n}: {m['name']} is {m['value']}; a counter is a finite count ≥ 0")
        key = (m["name"], tuple(sorted(LABEL.findall(m["labels"] or ""))))
        if key in seconds:
            raise ValueError(f"{m['name']}{{{m['labels'] or ''}}} appears three times: give one scrape or two")
        (seconds if key in firsts else firsts)[key] = value
    two = bool(seconds)
    if two:
        missing = [k for k in firsts if k not in seconds]
        if missing:
            raise ValueError(f"{missing[0][0]} is in the first scrape only: give two whole scrapes of one server")
        back = [k for k in firsts if seconds[k] < firsts[k]]
        if back:
            raise ValueError(f"{back[0][0]} went down between the scrapes ({firsts[back[0]]:g} → "
                             f"{seconds[back[0]]:g}): the server restarted between them")
    counts = {k: seconds[k] - firsts[k] for k in firsts} if two else firsts

    def total(name: str, required: bool = True) -> int:
        vals = [v for (nm, _), v in counts.items() if nm == name]
        if not vals and required:
            raise ValueError(f"{name} is missing")
        return int(round(sum(vals)))

    per_pos: dict[int, float] = {}
    for (name, labels), v in counts.items():
        if name != PER_POS:
            continue
        pos = dict(labels).get("position")
        if pos is None or not pos.isdigit():
            raise ValueError(f"{PER_POS} has a series without a whole-number position label ({dict(labels)})")
        per_pos[int(pos)] = per_pos.get(int(pos), 0.0) + v
    steps, drafted, accepted = total(DRAFTS), total(DRAFT_TOKENS), total(ACCEPTED)
    if not per_pos:
        raise ValueError(f"{PER_POS} is missing: the per-position acceptance cannot be known")
    k = max(per_pos) + 1
    gaps = [i for i in range(k) if i not in per_pos]
    if gaps:
        raise ValueError(f"{PER_POS} lacks position {gaps[0]} (positions 0..{k - 1} expected)")
    if steps == 0:
        raise NothingToGoOn(f"{DRAFTS} is 0{' between the scrapes' if two else ''}: no speculative step, "
                            "nothing to go on")
    if accepted > drafted:
        raise ValueError(f"{ACCEPTED} ({accepted}) is more than {DRAFT_TOKENS} ({drafted})")
    if drafted > steps * k:
        raise ValueError(f"{DRAFT_TOKENS} ({drafted}) is more than {DRAFTS} ({steps}) × the {k} positions exported")
    survival = [per_pos[i] / steps for i in range(k)]
    if any(s > 1 for s in survival) or any(b > a + 1e-9 for a, b in zip(survival, survival[1:])):
        raise ValueError(f"{PER_POS} is not a prefix count: position shares {', '.join(f'{s:.2f}' for s in survival)} "
                         "(each at most the one before, and at most 1)")
    if abs(sum(per_pos.values()) - accepted) > 0.5:
        raise ValueError(f"{PER_POS} sums to {sum(per_pos.values()):g} accepted tokens, {ACCEPTED} says {accepted}")
    notes = [("two scrapes: the counts are their difference, the window between them" if two else
              "one scrape: the counts run from the server's start (two scrapes in one file give a window)"),
             "a Prometheus scrape has per-position counts but no per-step arrays: each K′ < K is predicted in "
             "expectation from the per-position shares, not step by step"]
    return ServerLog("vLLM", k, steps, drafted, accepted, survival, total(REQUESTS, required=False), None, notes)


__all__ = ["is_scrape", "read_scrape"]
