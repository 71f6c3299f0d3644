"""The seam that lets a draft source read the target (runners/hidden.py, DraftSource.reads/observe).

A test-only head drafts from the target's own hidden rows: its last row
after the final norm, through the target's own LM head. What a user (or a
head's author) would notice:

* the rows a source receives are the target's: at every position the
  sequence kept, equal to a fresh forward's hidden states, at the depths it
  asked for (pre-norm, post-norm, a list of layers), arriving contiguous
  after the prefill and after every step, rejected windows and hybrid
  rollbacks included;
* decoding stays exact with such a source: greedy output is `generate`'s,
  sampled output follows the target's law (chi-square), on a Llama-like
  model and on a hybrid (qwen3_5_text);
* a runner not asked keeps nothing; `--engine graphs` asked by name refuses
  a target-reading source in one line, under `auto` its passes run uncaptured.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch

import gammatune_tui.engine.decoder as decoder_module
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.pair import ModelPair
from gammatune_tui.engine.common.sampling import Served, sample
from gammatune_tui.engine.drafting import Draft, DraftSource
from gammatune_tui.engine.runners import EagerRunner, GraphRunner, StaticRunner, TargetReads, TargetRows
from gammatune_tui.errors import EngineUnavailable
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test, joint_law
from tiny_models import emitted, greedy_ref, make_family, make_llama, make_word_tokenizer

CPU = torch.device("cpu")


class LensHead(DraftSource):
    """Drafts up to two tokens from the law the target's last kept row gives through the target's own LM head
    (the law of the token already chosen there: right on repetitive text), and keeps every row it is handed,
    checking the seam's contract as it goes."""

    runner = None

    def __init__(self, model, reads: TargetReads):
        self.model = model
        self.reads = reads
        self.rows: list[torch.Tensor] = []   # one (count, hidden) per position 0 … len − 1
        self.calls: list[tuple[int, int]] = []   # (start, n) of each observe

    def observe(self, rows: TargetRows) -> None:
        assert rows.hidden.shape[1:] == (self.reads.count, self.model.config.hidden_size)
        assert rows.start <= len(self.rows), "rows arrive contiguous"
        del self.rows[rows.start:]   # a rejected window's rows: stale
        self.rows.extend(rows.hidden.unbind(0))
        self.calls.append((rows.start, len(rows)))

    def draft(self, ids, window, *, policy, served, gen, eos, device) -> Draft:
        assert len(self.rows) == len(ids) - 1, "the rows cover every position but the last token's"
        out = Draft()
        if window <= 0 or not self.rows:
            return out
        with torch.inference_mode():   # the rows come from the target's passes: inference tensors
            logits = self.model.lm_head(self.rows[-1][-1]).float()   # the last kind of row asked for
        probs = torch.softmax(logits, -1) if served.greedy else served.probs(logits.unsqueeze(0))[0]
        for _ in range(min(window, 2)):
            x = int(probs.argmax()) if served.greedy else int(sample(probs.unsqueeze(0), gen))
            out.ids.append(x)
            out.top.append(float(probs.max()))
            out.chosen.append(float(probs[x]))
            out.entropy.append(float(torch.special.entr(probs).sum()))
            if not served.greedy:
                out.q_rows.append(probs)
            out.calls += 1
        return out


def _with_head(monkeypatch, reads: TargetReads) -> list[LensHead]:
    made: list[LensHead] = []

    def make(settings, ctx):
        made.append(LensHead(ctx.pair.target, reads))
        return made[-1]

    monkeypatch.setattr(decoder_module, "make_source", make)
    return made


def _pair(target, tok) -> ModelPair:
    pair = ModelPair(target=target, draft=None, tokenizer=tok, device=CPU, dtype=torch.float32,
                     eos_ids=frozenset({1}), name_target="t", name_draft="lens")
    return pair


def _reference(model, ids: list[int]) -> tuple[torch.Tensor, ...]:
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    return tuple(h[0] for h in out.hidden_states)   # [0] embeddings … [-1] after the final norm


# a vocabulary of 16: the lens's guess (the last token's law again) is right often enough to be accepted
TARGETS = {
    "llama": lambda: make_llama(16, seed=2, init=0.3, layers=3),
    "qwen3_5_text": lambda: make_family("qwen3_5_text", 0, vocab=16, extra={"initializer_range": 0.3}),
}
PROMPT = [5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6]


@pytest.mark.parametrize("engine", ["eager", "static", "graph-body"])
@pytest.mark.parametrize("family", list(TARGETS))
def test_greedy_with_a_head_reading_the_target_is_generates_and_the_rows_are_the_targets(family, engine, monkeypatch):
    if family != "llama" and engine != "eager":
        pytest.skip("a hybrid runs on its own runner whatever the engine")
    target = TARGETS[family]()
    n_layers = target.config.num_hidden_layers
    pair = _pair(target, make_word_tokenizer([str(i) for i in range(16)]))
    if engine != "eager":
        pair = dataclasses.replace(pair, engine=engine)
    reads = TargetReads(layers=(0, 1), last=True, normed=True)
    made = _with_head(monkeypatch, reads)
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), drafter="prompt-lookup")
    evs = list(dec.generate(PROMPT, max_new_tokens=30))
    steps = [e for e in evs if isinstance(e, StepEvent)]
    assert emitted(evs) == greedy_ref(pair, PROMPT, 30)
    assert any(e.accepted > 0 for e in steps) and any(e.accepted < len(e.drafted) for e in steps)   # both paths
    head = made[-1]
    assert head.calls[0] == (0, len(PROMPT) - 1)   # the prefill's rows, then each step's from where it began
    assert len(head.calls) == len(steps) + 1
    ids = dec.ids
    assert len(head.rows) == len(ids) - 1
    ref = _reference(target, ids[:-1])
    got = torch.stack(head.rows)   # (positions, 4, hidden)
    tol = dict(rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got[:, 0], ref[0], **tol)
    torch.testing.assert_close(got[:, 1], ref[1], **tol)
    # depth N before the norm is what the last layer returned; transformers' last entry is after the norm
    torch.testing.assert_close(got[:, 3], ref[-1], **tol)
    torch.testing.assert_close(target.model.norm(got[:, 2]), ref[-1], **tol)
    assert n_layers >= 2


def test_a_runner_not_asked_keeps_nothing_and_graphs_by_name_refuse_in_one_line():
    model = make_llama(64, seed=1, layers=2)
    run = EagerRunner(model)
    run.start(16)
    run.forward(torch.tensor([[3, 4, 5]]), 1)
    assert run.hidden is None and run.tapper is None
    run.read_target(TargetReads(normed=True))
    run.forward(torch.tensor([[6, 7]]), 1)
    assert run.hidden is not None and run.hidden.shape == (2, 1, 32)
    run.read_target(None)
    run.forward(torch.tensor([[8]]), 1)
    assert run.hidden is None
    assert all(not m._forward_hooks for m in model.modules())   # no hook left behind
    static = StaticRunner(model)
    static.read_target(TargetReads(last=True))
    static.start(16)
    static.forward(torch.tensor([[3, 4, 5]]), 1)
    assert static.hidden.shape == (3, 1, 32)
    strict = GraphRunner(model, capture=False, strict=True)
    with pytest.raises(EngineUnavailable, match="^--engine graphs: a draft source that reads the target's hidden"):
        strict.read_target(TargetReads(normed=True))
    with pytest.raises(Exception, match="depth 9, but the target has 2 layers"):
        run.read_target(TargetReads(layers=(9,)))


@pytest.mark.parametrize("family", ["llama", "qwen3_5_text"])
def test_sampled_output_with_a_head_reading_the_target_follows_the_targets_law(family, monkeypatch):
    if family == "llama":
        target = make_llama(8, seed=11, init=0.6, eos=None, bos=None, layers=1)
    else:
        target = make_family("qwen3_5_text", 11, vocab=8, extra={"initializer_range": 0.6})
    pair = _pair(target, make_word_tokenizer([str(i) for i in range(8)]))
    pair = dataclasses.replace(pair, eos_ids=frozenset({-1}))
    _with_head(monkeypatch, TargetReads(normed=True))
    cfg = SamplingConfig(temperature=1.0)
    p_law = joint_law(target, Served(cfg), 8)
    counts: Counter = Counter()
    rolled = 0
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 2), dataclasses.replace(cfg, seed=seed),
                                 drafter="prompt-lookup")
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                rolled += 0 < ev.accepted < len(ev.drafted)
        counts[out[0] * 8 + out[1]] += 1
    assert rolled > 0
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
