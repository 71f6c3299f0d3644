"""What a drafted token's confidence says about its acceptance: the calibration table and transformers' ROC threshold.

Two policies read the draft's confidence this way. `assistant-threshold` with
`dynamic_tau` picks one cut-off with transformers' ROC rule (`roc_threshold`).
`costaware` keeps a table: confidence bins, each holding the probability that
a token in that bin is accepted given that every token before it in the
window was, started from a prior fitted offline on the demo pair's traces
(`calibration_prior.json`, written by `benchmarks/policy_study.py
--write-prior`) and updated online from every verified token, its counts
decaying by `forget` at each step that judges a token, so the table follows a
conversation that changes topic. Pure Python and deterministic.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

PRIOR_FILE = Path(__file__).with_name("calibration_prior.json")
# Upper edges of the confidence bins (the last bin runs to 1): finer near 1,
# where a small draft puts most of its tokens and acceptance changes fastest.
BIN_EDGES: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
N_BINS = len(BIN_EDGES) + 1


def bin_of(confidence: float) -> int:
    """The calibration bin of a drafted token's confidence (values outside [0, 1] go to the end bins)."""
    return bisect_right(BIN_EDGES, float(confidence))


@dataclass(frozen=True)
class Prior:
    """Acceptance per confidence bin, and overall, as fitted offline on a pair's traces."""

    accept: tuple[float, ...]
    mean: float
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.accept) != N_BINS or not all(0.0 <= a <= 1.0 for a in (*self.accept, self.mean)):
            raise ValueError(f"a calibration prior needs {N_BINS} acceptances in [0, 1]")

    @classmethod
    def identity(cls) -> "Prior":
        """Acceptance = the bin's middle confidence: what a perfectly calibrated draft would give."""
        edges = (0.0, *BIN_EDGES, 1.0)
        mids = tuple((lo + hi) / 2 for lo, hi in zip(edges, edges[1:]))
        return cls(mids, 0.5, "identity")

    @classmethod
    def fit(cls, pairs: "list[tuple[float, bool]]", source: str = "", smooth: float = 1.0) -> "Prior":
        """From (confidence, accepted) pairs: each bin's rate, shrunk by `smooth` pseudo-counts to the identity."""
        hits = [0.0] * N_BINS
        seen = [0.0] * N_BINS
        for conf, ok in pairs:
            b = bin_of(conf)
            seen[b] += 1
            hits[b] += 1.0 if ok else 0.0
        ident = cls.identity().accept
        acc = tuple((hits[b] + smooth * ident[b]) / (seen[b] + smooth) for b in range(N_BINS))
        mean = sum(hits) / sum(seen) if sum(seen) else 0.5
        return cls(acc, mean, source)

    def to_json(self) -> dict:
        return {"bin_edges": list(BIN_EDGES), "accept": list(self.accept), "mean": self.mean, "source": self.source}

    @classmethod
    def from_json(cls, d: dict) -> "Prior":
        if list(d.get("bin_edges", [])) != list(BIN_EDGES):
            raise ValueError("the calibration prior was fitted with other confidence bins")
        return cls(tuple(float(a) for a in d["accept"]), float(d["mean"]), str(d.get("source", "")))


_SHIPPED: "Prior | None" = None


def shipped_prior() -> Prior:
    """The prior shipped with gammatune (the demo pair's), or the identity table if the file is missing."""
    global _SHIPPED
    if _SHIPPED is None:
        try:
            _SHIPPED = Prior.from_json(json.loads(PRIOR_FILE.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            _SHIPPED = Prior.identity()
    return _SHIPPED


@dataclass
class Calibration:
    """The online table: decayed counts per bin on top of the prior's `weight` pseudo-counts."""

    prior: Prior
    weight: float
    forget: float
    hits: list[float] = field(default_factory=lambda: [0.0] * N_BINS)
    seen: list[float] = field(default_factory=lambda: [0.0] * N_BINS)

    def accept(self, confidence: float) -> float:
        """P(this token is accepted | every token before it in the window was)."""
        b = bin_of(confidence)
        return (self.weight * self.prior.accept[b] + self.hits[b]) / (self.weight + self.seen[b])

    def mean(self) -> float:
        """ā: the acceptance of a token whose confidence is not known yet."""
        return (self.weight * self.prior.mean + sum(self.hits)) / (self.weight + sum(self.seen))

    def best(self) -> float:
        """The highest acceptance any bin promises (bounds every P_k)."""
        return max(self.accept(edge) for edge in (0.0, *BIN_EDGES))

    def learn(self, confidences: list[float], accepted: int, drafted: int) -> None:
        """One verified window: decay the counts, then tokens 1…A accepted, token A + 1 (if drafted) rejected.

        Tokens after the first rejection were never judged on their own (their
        prefix was already lost), so they teach the table nothing. A step that
        judged no token (a plain target step) teaches nothing and so forgets
        nothing: the counts fade as new verdicts replace them, not with time.
        Were they to fade on plain steps, a session that stopped drafting would
        slide back to the prior (the demo pair's, where drafting rarely pays on
        a dear draft) with no verdict ever to correct it, and never draft again
        (SmolLM2 with self:int8: 2 of 8 held-out prompts, docs/policies.md).
        """
        labelled = min(len(confidences), drafted, accepted + 1)
        if labelled <= 0:
            return
        f = self.forget
        if f < 1.0:
            self.hits = [h * f for h in self.hits]
            self.seen = [s * f for s in self.seen]
        for i in range(labelled):
            b = bin_of(confidences[i])
            self.seen[b] += 1.0
            if i < accepted:
                self.hits[b] += 1.0


def roc_threshold(probs: list[float], labels: list[int]) -> float:
    """sklearn.metrics.roc_curve + argmin(fpr + 3·(1 − tpr)), as transformers does it, in pure Python."""
    pairs = sorted(zip(probs, labels), key=lambda x: -x[0])
    pos = sum(labels)
    neg = len(labels) - pos
    # thresholds: +inf first, then each distinct score (descending)
    best_cost = 0.0 + 3 * 1.0  # threshold = +inf: fpr 0, tpr 0
    best_thr = math.inf
    tp = fp = 0
    i = 0
    while i < len(pairs):
        score = pairs[i][0]
        while i < len(pairs) and pairs[i][0] == score:
            if pairs[i][1]:
                tp += 1
            else:
                fp += 1
            i += 1
        cost = fp / neg + 3 * (1 - tp / pos)
        if cost < best_cost:
            best_cost, best_thr = cost, score
    return float(best_thr) if math.isfinite(best_thr) else 1.0
