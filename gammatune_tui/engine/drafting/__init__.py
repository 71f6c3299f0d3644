"""Phase 1 of a step: a draft source proposes up to γ tokens; here the draft model's loop, one forward each.

`Draft` is what every source returns (draft_sources.py is the seam; the
sources without a draft model have a file each beside it) and `DraftSource` the interface the decoder drives.

How often the host waits for the device:

* a policy that fixes γ before the window and never stops (specdecode,
  hf-heuristic, gammatune, adaptive-k) gets the whole window drafted on the
  device, each token fed back as a device tensor, and reads nothing here:
  the window stays `pending` and comes back with the verdict, in the step's
  one read (verification.py). The window is cut after its first EOS then
  (the tokens drafted past it were verified for nothing and are rewound with
  the rest); the policy learns the kept window, every token's statistics in
  order, in its update (`Draft.stats`);
* a policy that may end the window early (`Policy.may_stop_early`: assistant-
  threshold, gammatune+, costaware) must see each token's probabilities
  before deciding to draft the next, so that loop reads one small tensor
  back per drafted token, except the window's last: at γ nothing is left to
  decide, so that token stays pending too. A window that runs to γ costs d
  reads in all, verdict included; one the policy stopped early d + 1.

Every device→host read goes through `host_read`, so tests can count them.
In sampled mode each distribution q is kept for the target's accept test.
Each drafted token's statistics (`TokenStats`: top and chosen probability and
the entropy, all of the q it was drawn from) travel with it, on the device
until read, so the one read per step stays one read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypeVar, Union

import torch

from ..common.pair import ModelPair
from ..policies.policy_base import Policy, TokenStats
from ..policies.step_rule import window_ends
from ..runners import Runner
from ..runners.hidden import TargetReads, TargetRows
from ..common.sampling import Served, sample
from ..common.staging import to_device

if TYPE_CHECKING:
    from types import SimpleNamespace

    from transformers import PretrainedConfig, PreTrainedModel

TargetConfig = Union["PretrainedConfig", "SimpleNamespace", dict[str, Any]]
"""A target's config as a head's checks read it: the loaded model's, its config.json read as attributes before
the weights load (loading/model_files.py `read_config`), or a dict."""


@dataclass
class Draft:
    ids: list[int] = field(default_factory=list)
    top: list[float] = field(default_factory=list)  # the draft's highest probability at each position
    chosen: list[float] = field(default_factory=list)  # the draft's probability of the token it drafted
    entropy: list[float] = field(default_factory=list)  # H(q) in nats at each position (0: a point mass)
    q_rows: list[torch.Tensor] = field(default_factory=list)  # sampled mode only
    early: bool = False  # the policy ended the window before γ
    calls: int = 0
    # q is a point mass at each drafted token (a model-free source proposes deterministically):
    # no q rows; the target accepts x with probability p(x) (verification.py)
    point_mass: bool = False
    # tokens drafted on the device and not read yet: they follow `ids` and are read with the verdict
    pending: "Pending | None" = None

    def settle(self, ids: list[int], top: list[float], chosen: list[float], entropy: list[float], keep: int) -> None:
        """The pending tokens, read back with the verdict: the first `keep` appended (the window ends after its
        first EOS; verification.py decides where, on the device, and reads it back with them)."""
        if self.pending is not None:
            self.q_rows = self.q_rows + self.pending.rows[:keep]
        self.pending = None
        self.ids = self.ids + [int(v) for v in ids[:keep]]
        self.top = self.top + list(top[:keep])
        self.chosen = self.chosen + list(chosen[:keep])
        self.entropy = self.entropy + list(entropy[:keep])

    def stats(self) -> list[TokenStats]:
        """The kept window's statistics, in order: what the policy learns from in its update."""
        return [TokenStats(*t) for t in zip(self.top, self.chosen, self.entropy)]


@dataclass
class Pending:
    """Drafted tokens still on the device: ids, top and chosen probabilities, entropies (k each) and, sampled, q rows."""

    ids: torch.Tensor  # (k,) long
    top: torch.Tensor  # (k,) float32
    chosen: torch.Tensor  # (k,) float32
    entropy: torch.Tensor  # (k,) float32
    rows: list[torch.Tensor] = field(default_factory=list)  # sampled mode only

    @property
    def size(self) -> int:
        return int(self.ids.shape[0])


@dataclass(frozen=True)
class SourceContext:
    """What a source is built from for one session, beside its own parameters (`DraftSource.create`)."""

    pair: ModelPair                   # the target (a head reads its modules and its folder), tokenizer, device
    runner: Runner | None             # the draft model's runner (None: the pair has no draft model)
    vocab_cut: int | None             # the draft model's rows past this id are not the target's vocabulary
    previous: "DraftSource | None"    # the same decoder's last session's source (None in its first)


class DraftSource:
    """One session's proposer (draft_sources.py). `start` sees the prompt; `draft` proposes up to `window` tokens.

    A source with a KV cache exposes its `runner`; the decoder prefills and
    rewinds it together with the target's (kv_cache.py). `length` is what it
    has cached (0 for a model-free source).

    A source that reads the target (a head: MTP, EAGLE-3, DFlash) sets
    `reads` (runners/hidden.py `TargetReads`: which layers' rows) by the time
    `create` returns. The target's runner then keeps those rows, and the
    decoder hands them to `observe`: once after the prefill (positions 0 …
    len(prompt) − 2) and once after every step's rewind (the positions the
    step's verify ran and the sequence kept: the window's first token and the
    accepted drafts, the last row being the one that chose the bonus token).
    Rows always arrive in order and contiguous: `rows.start` is the first
    position they cover, and anything the source derived for positions at or
    past it (a rejected window's) is stale; `rows.end` is the target's cache
    length after the step, and `ids[rows.end]` is the last token `draft` is
    handed next. A source that keeps a cache of its own beside these rows (a
    head's KV) rewinds it there.
    """

    runner: Runner | None = None
    reads: TargetReads | None = None   # which of the target's hidden rows this source reads (None: none)

    @property
    def length(self) -> int:
        return self.runner.length if self.runner is not None else 0

    @classmethod
    def create(cls, params: dict[str, Any], made: "SourceContext") -> "DraftSource":
        """The source for one session from its row's parameters (`make_source`). A source without a draft
        model takes only its parameters; a head reads the target from `made.pair`; one that keeps something
        across a conversation's turns reads it from `made.previous`, the same decoder's last session's source
        (None in its first)."""
        return cls(**params)

    @classmethod
    def check_files(cls, params: dict[str, Any], target_config: TargetConfig | None) -> None:
        """Refuse, in one line and before any weights load, files of the source's own (a head's folder) that do
        not fit the target (its config.json's fields; None when it has none to read yet); nothing to check for a source without files of its own."""

    @classmethod
    def prepare(cls, params: dict[str, Any], target: PreTrainedModel) -> str:
        """At load, once the target's weights are in: read what the source keeps across sessions (a head's weights:
        a bad tensor is one line then, before anything runs) and return the words that name it in the pair's
        title ("" for the source's own name)."""
        return ""

    def start(self, prompt_ids: list[int]) -> None:
        """A new session over `prompt_ids` (a runner has been prefilled already)."""

    def observe(self, rows: TargetRows) -> None:
        """The target's rows of positions rows.start … rows.end − 1 (only for a source with `reads`; see above)."""

    def step_parts(self, ids: list[int], served: Served) -> dict[str, Callable[[], object]]:
        """The parts of one drafting step from `ids`, by name, each a callable that runs that part once and
        leaves the source as it was: `doctor` times them apart, to show where a head's step goes (its layer
        against its projection over the vocabulary). {}: a source whose step is not split."""
        return {}

    def draft(self, ids: list[int], window: int, *, policy: Policy, served: Served, gen: torch.Generator,
              eos: frozenset[int], device: torch.device) -> Draft:  # pragma: no cover - abstract
        raise NotImplementedError



State = TypeVar("State")


def chain_draft(h: State, window: int, law: Callable[[State], torch.Tensor], advance: Callable[[State, int], State], *,
                served: Served, gen: torch.Generator, policy: Policy, eos: frozenset[int]) -> Draft:
    """A head's window, chained on its own output: from the target's last row `h`, a token from `law(h)` (the
    served q), then `h = advance(h, x)`, until the window or the policy ends it. Greedy drafts the argmax;
    sampled drafts draw from q and keep its rows for the exact accept test. What the MTP and EAGLE-3 heads
    share; each keeps its own law, chain and cache. `h` is whatever state the chain advances (a row; DFlash's place
    in its block)."""
    out = Draft()
    seen: list[TokenStats] = []
    while True:
        probs = law(h)
        x = int(probs.argmax()) if served.greedy else int(sample(probs.unsqueeze(0), gen))
        if not served.greedy:
            out.q_rows.append(probs)
        out.calls += 1
        stats = TokenStats(float(probs.max()), float(probs[x]), float(torch.special.entr(probs).sum()))
        out.ids.append(x)
        out.top.append(stats.top)
        out.chosen.append(stats.chosen)
        out.entropy.append(stats.entropy)
        done, out.early = window_ends(len(out.ids), window, x, stats, seen, policy, eos)
        if done:
            return out
        seen.append(stats)
        h = advance(h, x)

def host_read(t: torch.Tensor) -> list:
    """The one way drafting reads values back from the device (a sync on a GPU)."""
    return t.tolist()


def _next_token(runner: Runner, inp: torch.Tensor, served: Served, gen: torch.Generator, vocab_cut: int | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One draft forward: (token (1,), top prob, chosen prob, entropy, served row q or None), all on the device.

    The entropy is H(q) in nats of the law the token came from: the raw
    softmax when greedy, the served one when sampling (`torch.special.entr`
    counts a zero probability as 0).
    """
    logits = runner.forward(inp, 1)[-1]
    if vocab_cut is not None:
        logits = logits[:vocab_cut]
    logits = logits.float()
    if served.greedy:
        probs = torch.softmax(logits, dim=-1)
        top, x = probs.max(dim=-1, keepdim=True)
        return x, top, top, torch.special.entr(probs).sum().view(1), None
    probs = served.probs(logits.unsqueeze(0))
    x = sample(probs, gen)
    return (x, probs.max(dim=-1).values, probs.gather(1, x.view(1, 1)).view(1),
            torch.special.entr(probs).sum().view(1), probs[0])


def draft_window(
    runner: Runner, feed: list[int], window: int, *, policy: Policy, served: Served,
    gen: torch.Generator, vocab_cut: int | None, eos: frozenset[int], device: torch.device,
) -> Draft:
    """`feed` is what the draft has not cached yet; an EOS or a window of 0 ends drafting."""
    out = Draft()
    if window <= 0:
        return out
    inp = to_device(feed, device)
    if not policy.may_stop_early:
        return _whole_window(runner, inp, window, out, served=served, gen=gen, vocab_cut=vocab_cut)
    seen: list[TokenStats] = []
    while True:
        x, top, chosen, ent, q = _next_token(runner, inp, served, gen, vocab_cut)
        out.calls += 1
        if len(out.ids) + 1 >= window:  # the window's last token: nothing left to decide, read it with the verdict
            out.pending = Pending(x.view(1), top.view(1), chosen.view(1), ent, [q] if q is not None else [])
            return out
        if q is not None:
            out.q_rows.append(q)
        xf, top_p, chosen_p, ent_p = host_read(torch.cat((x.to(top.dtype), top.view(1), chosen.view(1), ent)))
        xi = int(xf)
        out.ids.append(xi)
        out.top.append(top_p)
        out.chosen.append(chosen_p)
        out.entropy.append(ent_p)
        stats = TokenStats(top_p, chosen_p, ent_p)
        done, out.early = window_ends(len(out.ids), window, xi, stats, seen, policy, eos)
        if done:
            return out
        seen.append(stats)
        inp = x.view(1, 1)


def _whole_window(runner: Runner, inp: torch.Tensor, window: int, out: Draft, *, served: Served,
                  gen: torch.Generator, vocab_cut: int | None) -> Draft:
    """The whole window on the device, nothing read: it stays pending until the verdict's read."""
    xs, tops, chosen, ents, rows = [], [], [], [], []
    for _ in range(window):
        x, top, ch, ent, q = _next_token(runner, inp, served, gen, vocab_cut)
        xs.append(x.view(1))
        tops.append(top.view(1))
        chosen.append(ch.view(1))
        ents.append(ent)
        if q is not None:
            rows.append(q)
        inp = x.view(1, 1)
    out.calls = window
    out.pending = Pending(torch.cat(xs), torch.cat(tops), torch.cat(chosen), torch.cat(ents), rows)
    return out


__all__ = ["Draft", "DraftSource", "Pending", "SourceContext", "draft_window", "host_read"]
