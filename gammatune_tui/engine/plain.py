"""Plain target-only decoding: the reference every speedup is measured against, written once.

A comparison of γ policies says which policy is fastest, but not whether
speculation pays at all on this machine; only the target decoding alone, one
token per forward pass, on the same prompt, sampling settings and forward
path, says that. Greedy output is the target's own text: the tokens every
lossless method must reproduce.

Every plain loop in the package is `plain_decode`; what differs between its
callers is only which forward path runs the target:

* the pair's own runner (eager, static or graphs: the one the decoder uses),
  with the decoder's processors and served distribution, so the two differ
  only in speculation (compare's reference row, the chat's plain speed);
* `transformers_cache=True`: the paper's baseline, the model's own forward
  over transformers' cache, one token per call, as `generate` runs it (the
  bench's target-only rows, the traces the simulator replays, the demo
  pair's measure script).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterable, Sequence

import torch

from .common.pair import ModelPair
from .common.vocab import shared_vocab
from .context import check_context
from .logits_processing import session_processors, wrap_runner
from .runners import runner_pool
from .runners.base import Runner
from .runners.hf_compat import cache_kw
from .runners.recurrent import session_cache
from .common.sampling import SamplingConfig, Served, make_generator, sample

if TYPE_CHECKING:
    from transformers import DynamicCache, PreTrainedModel


@dataclass
class PlainRun:
    """One target-only generation: its tokens and time (prefill included, as a session's wall time is)."""

    token_ids: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    stop_reason: str = "max_new_tokens"
    prefill_s: float = 0.0                                   # the cache set up and the prompt fed, within wall_s
    token_s: list[float] = field(default_factory=list)      # each token's forward and choice
    margins: list[tuple[float, float]] = field(default_factory=list)   # greedy: (top logit, top-two gap) per token

    @property
    def tokens(self) -> int:
        return len(self.token_ids)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0


class TransformersCacheRunner(Runner):
    """The paper's baseline as a runner: the model's own forward over a fresh transformers cache, without
    autograd, as `generate` calls it (no fast path, no preallocated buffers); it never rewinds."""

    kind = "transformers"

    def __init__(self, model: PreTrainedModel, device: torch.device):
        super().__init__(model)
        self.device = device
        self.cache: DynamicCache | None = None

    @property
    def length(self) -> int:
        return 0 if self.cache is None else int(self.cache.get_seq_length())

    def start(self, capacity: int, gamma_max: int | None = None) -> None:
        self.cache = session_cache(self.model)   # a hybrid model's own cache (runners/recurrent.py)

    def prefill(self, ids: torch.Tensor) -> None:
        self.forward(ids, 1)

    def forward(self, ids: torch.Tensor, keep: int) -> torch.Tensor:
        with torch.no_grad():
            return self.model(input_ids=ids, **cache_kw(self.model, self.cache), use_cache=True,
                              logits_to_keep=keep).logits[0, -keep:]


def prefilled(model: PreTrainedModel, ids: list[int], device: torch.device) -> DynamicCache | None:
    """A fresh transformers cache holding `ids` but the last token (the one the next pass feeds), as the
    paper's baseline starts; the caller's clock, if any, includes the prefill."""
    runner = TransformersCacheRunner(model, device)
    runner.start(len(ids))
    if len(ids) > 1:
        runner.prefill(torch.tensor([ids[:-1]], device=device))
    return runner.cache


def plain_decode(pair: ModelPair, prompt_ids: Sequence[int], max_new_tokens: int,
                 sampling: SamplingConfig | None = None, *, transformers_cache: bool = False,
                 vocab: int | None = None, eos_ids: Iterable[int] | None = None) -> PlainRun:
    """The target alone, KV-cached, one token per forward; greedy or sampled as `sampling` says.

    `transformers_cache`: run the paper's baseline path instead of the pair's
    runner. `vocab`: the ids it chooses among (default: those both models
    speak, as the decoder does). `eos_ids`: the ids that end the text
    (default the pair's; empty: it runs to `max_new_tokens`).
    """
    ids = [int(i) for i in prompt_ids]
    check_context(pair, len(ids), max_new_tokens)
    sampling = sampling or SamplingConfig()
    device = torch.device(pair.device)
    served = Served(sampling)
    gen = make_generator(sampling.seed, device)
    vocab = shared_vocab(pair.target, pair.draft) if vocab is None else int(vocab)
    eos = set(int(i) for i in (pair.eos_ids if eos_ids is None else eos_ids))
    pool = None if transformers_cache else runner_pool(pair)
    runners = None if pool is None else pool.acquire()
    raw = TransformersCacheRunner(pair.target, device) if runners is None else runners.target
    run = PlainRun()
    try:
        # the same processors as the speculative sessions (a repetition penalty): the reference is their law
        trun = wrap_runner(raw, session_processors(sampling, None))
        t0 = time.perf_counter()
        trun.start(len(ids) + max_new_tokens)
        if len(ids) > 1:
            trun.prefill(torch.tensor([ids[:-1]], device=device))
        run.prefill_s = time.perf_counter() - t0
        last = ids[-1]
        aside = 0.0   # the margins' cost, kept off the clock: the reference is timed as plain decoding runs
        while run.tokens < max_new_tokens:
            t1 = time.perf_counter()
            logits = trun.forward(torch.tensor([[last]], device=device), 1)[-1:, :vocab]
            if served.greedy:
                last = int(logits.argmax(-1))     # int() waits for the device: the token is timed whole
            else:
                last = int(sample(served.probs(logits.float()), gen)[0])
            run.token_ids.append(last)
            run.token_s.append(time.perf_counter() - t1)
            if served.greedy:
                t2 = time.perf_counter()
                top2 = logits[-1].float().topk(min(2, logits.shape[-1])).values.tolist()
                run.margins.append((top2[0], top2[0] - top2[-1]))
                aside += time.perf_counter() - t2
            if last in eos:
                run.stop_reason = "eos"
                break
        run.wall_s = time.perf_counter() - t0 - aside
    finally:
        if pool is not None and runners is not None:
            pool.release(runners)
    return run


def plain_step_seconds(pair: ModelPair, sampling: SamplingConfig | None = None, steps: int = 24,
                       prompt_len: int = 8) -> float:
    """The median seconds of one plain target step (a one-token forward and the choice of its token).

    What plain target-only decoding costs a token on this machine now, without
    the prefill: the figure a live chat sets its own speed against (compare
    measures the same through `plain_decode`). The tokens are the target's
    own, from a short fixed prompt; EOS does not end the timing (the text is
    not used), and the step is priced by how it serves (greedy, top-k, top-p),
    without a repetition penalty."""
    sampling = replace(sampling or SamplingConfig(), repetition_penalty=1.0)
    vocab = shared_vocab(pair.target, pair.draft)
    ids = [(7 * k + 3) % vocab for k in range(prompt_len)]
    times = sorted(plain_decode(pair, ids, steps, sampling, eos_ids=()).token_s)
    return times[len(times) // 2]


__all__ = ["PlainRun", "TransformersCacheRunner", "plain_decode", "plain_step_seconds", "prefilled"]
