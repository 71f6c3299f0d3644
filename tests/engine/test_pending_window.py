"""A window drafted on the device and read back with the verdict (issue 18, m2) decides as one read on the host did.

The window is verified whole and cut after its first EOS only once read, so
these check what that could break: greedy output stays `target.generate`'s
when the draft proposes an EOS mid-window, the sampled law stays the
target's (chi-square, with the EOS as a token that ends the answer), and the
policy's update still gets every kept token's statistics, in order.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.step_clock import StepClock
from test_decoder_runners import PROMPT
from tiny_models import cache_lengths, emitted, greedy_ref
from test_sampling import N_SAMPLES, PROMPT_IDS, chi2_test


def _steps(pair, method, gamma0, prompt, n, sampling=None):
    dec = SpeculativeDecoder(pair, PolicySettings.build(method, gamma0), sampling or SamplingConfig())
    return dec, list(dec.generate(prompt, max_new_tokens=n))


def test_a_drafted_eos_mid_window_ends_the_answer_as_target_generate_does(tiny_pair):
    ids = tiny_pair.encode_prompt(PROMPT, raw=True)
    _, evs = _steps(tiny_pair, "specdecode", 6, ids, 60)
    # a token the draft proposed in the middle of a window, ahead of drafts the target accepted
    mid = next(e.drafted[1].id for e in evs if isinstance(e, StepEvent) and len(e.drafted) == 6)
    pair = dataclasses.replace(tiny_pair, eos_ids=frozenset({mid}))
    ref = greedy_ref(pair, ids, 60)
    dec, evs = _steps(pair, "specdecode", 6, ids, 60)
    steps = [e for e in evs if isinstance(e, StepEvent)]
    got = emitted(evs)
    assert got == ref[: len(got)] and (got[-1] == mid or len(got) == 60)
    assert len(got) == len(ref) or ref[len(got) - 1] == mid
    # the window that drafted it was cut after it: shorter than γ, ending at the EOS
    cut = [e for e in steps if e.drafted and e.drafted[-1].id == mid and len(e.drafted) < e.gamma]
    assert cut, "no window drafted the EOS mid-window: the test would not exercise the cut"
    assert all(mid not in [t.id for t in e.drafted[:-1]] for e in steps)
    assert cache_lengths(dec)[0] <= len(dec.ids)  # the tokens verified past the EOS were rewound


def _law_with_eos(model, served: Served, vocab: int, eos: int) -> torch.Tensor:
    """P(first two tokens), where an EOS first ends the answer: cell (eos, 0) holds P(x1 = eos)."""
    with torch.no_grad():
        first = served.probs(model(torch.tensor([PROMPT_IDS])).logits[0, -1:].float())[0]
        seqs = torch.tensor([PROMPT_IDS + [x] for x in range(vocab)])
        second = served.probs(model(seqs).logits[:, -1].float())
    law = first[:, None] * second
    law[eos] = 0.0
    law[eos, 0] = first[eos]
    return law


def test_sampled_windows_cut_at_a_drafted_eos_follow_the_targets_law(micro_pair):
    vocab = micro_pair.target.config.vocab_size
    cfg = SamplingConfig(temperature=1.0)
    served = Served(cfg)
    with torch.no_grad():
        q1 = served.probs(micro_pair.draft(torch.tensor([PROMPT_IDS])).logits[0, -1:].float())[0]
    # the EOS: a token the draft proposes often (windows then hold it before their end), among those that
    # leave the draft's law clearly apart from the target's, so that the test can fail
    for eos in q1.argsort(descending=True).tolist():
        p_law = _law_with_eos(micro_pair.target, served, vocab, eos)
        q_law = _law_with_eos(micro_pair.draft, served, vocab, eos)
        if (p_law - q_law).abs().sum() > 0.3:
            break
    assert q1[eos] > 0.1
    pair = dataclasses.replace(micro_pair, eos_ids=frozenset({eos}))
    counts: Counter = Counter()
    cuts = 0
    for seed in range(N_SAMPLES):
        dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 3), SamplingConfig(1.0, seed=seed))
        out: list[int] = []
        for ev in dec.generate(PROMPT_IDS, max_new_tokens=3):
            if isinstance(ev, StepEvent):
                out.extend(t.id for t in ev.emitted)
                cuts += bool(ev.drafted) and ev.drafted[-1].id == eos and len(ev.drafted) < ev.gamma
        counts[out[0] * vocab + (out[1] if out[0] != eos else 0)] += 1
    assert cuts > N_SAMPLES // 10  # windows were cut at a drafted EOS often
    assert chi2_test(counts, p_law, N_SAMPLES) > 1e-3
    assert chi2_test(counts, q_law, N_SAMPLES) < 1e-6


def test_the_policy_learns_every_kept_token_in_order_in_its_update(tiny_pair):
    """Whole-window policies see the window only once it is read with the verdict; their update gets all of it."""
    for method in ("specdecode", "gammatune", "gammatune+", "costaware"):
        policy = PolicySettings.build(method, 4).make()
        learned: list = []
        update = policy.update
        policy.update = lambda accepted, drafted, window: learned.append((drafted, list(window))) or update(
            accepted=accepted, drafted=drafted, window=window)
        dec = SpeculativeDecoder(tiny_pair, policy, SamplingConfig())
        steps = [e for e in dec.generate(PROMPT, max_new_tokens=30) if isinstance(e, StepEvent)]
        assert len(learned) == len(steps)
        for (d, window), e in zip(learned, steps):
            assert d == len(e.drafted) == len(window)
            assert [(w.top, w.chosen, w.entropy) for w in window] == [
                (t.top_prob, t.chosen_prob, t.entropy) for t in e.drafted], (method, e.step)
        assert any(len(e.drafted) > 1 for e in steps)


def test_step_clock_spans_are_the_gaps_between_marks_on_the_cpu(monkeypatch):
    from gammatune_tui.engine import step_clock

    ticks = iter([10.0, 10.25, 11.0])
    monkeypatch.setattr(step_clock.time, "perf_counter", lambda: next(ticks))
    clock = StepClock(torch.device("cpu"))
    clock.start(), clock.drafted(), clock.verified()
    assert clock.spans() == (0.25, 0.75)
