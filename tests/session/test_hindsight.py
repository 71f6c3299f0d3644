"""After a greedy session: its own trace, its share of the oracle, and the way the result reaches run and chat."""

from __future__ import annotations

import pytest

from gammatune_tui.bench.sim.hindsight import session_hindsight, session_trace, step_price
from gammatune_tui.bench.sim.cost_model import calibrate
from gammatune_tui.bench.sim.oracle import WindowScript, oracle_run
from gammatune_tui.bench.sim.simulate import SimStep, play_trace
from gammatune_tui.cli import main
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.events import SessionHeader, StepEvent
from gammatune_tui.session.hindsight import Hindsight, not_applicable, run_hook
from gammatune_tui.session.live import LiveSource


def _session(pair, method, gamma0, n=40, prompt="abc", **params):
    s = PolicySettings.build(method, gamma0, gamma_min=1, **params)
    return list(SpeculativeDecoder(pair, s, SamplingConfig()).generate(prompt, max_new_tokens=n))


@pytest.mark.parametrize("method,gamma0", [("specdecode", 1), ("specdecode", 6), ("gammatune+", 3),
                                           ("assistant-threshold", 8), ("adaptive-k", 4)])
def test_the_trace_replays_the_session_and_the_oracle_never_loses_to_it(tiny_pair, method, gamma0):
    events = _session(tiny_pair, method, gamma0)
    header = events[0]
    steps = [e for e in events if isinstance(e, StepEvent)]
    trace = session_trace(tiny_pair, header, steps)
    assert trace.tokens == [t.id for s in steps for t in s.emitted]
    # the session's own windows, played over its trace, give back its steps exactly
    sim: list[SimStep] = []
    play_trace(trace, WindowScript([len(s.drafted) for s in steps]), len(trace.tokens), None, sim)
    assert [(x.drafted, x.accepted, x.emitted) for x in sim] == [(len(s.drafted), s.accepted, len(s.emitted))
                                                                 for s in steps]
    h = session_hindsight(tiny_pair, events)
    assert h.applicable and h.tokens == 40 and h.session_steps == len(steps)
    assert 0 < h.share <= 1 + 1e-12  # the session's path is one the oracle could take
    cost = calibrate(events)
    assert h.session_modelled_s == pytest.approx(sum(step_price(cost, len(s.drafted), len(s.emitted)) for s in steps))
    assert h.oracle_modelled_s == pytest.approx(oracle_run(trace, cost, len(trace.tokens)).best_s)


def test_sampled_unfinished_and_failed_sessions_say_why_there_is_no_number(tiny_pair):
    s = PolicySettings.build("specdecode", 3)
    sampled = list(SpeculativeDecoder(tiny_pair, s, SamplingConfig(temperature=0.8, seed=3)).generate("abc", 12))
    h = session_hindsight(tiny_pair, sampled)
    assert not h.applicable and "greedy decoding only" in h.reason and "T=0.8" in h.reason
    assert h.short() == "greedy only (T=0.8)"
    assert not_applicable(sampled[:-1]).reason == "the session did not finish"
    assert run_hook(lambda pair, events: 1 / 0, tiny_pair, sampled).reason.startswith("the check failed")
    assert run_hook(None, tiny_pair, sampled) is None


def test_live_source_checks_each_greedy_turn_after_its_last_event(tiny_pair):
    src = LiveSource(PolicySettings.build("gammatune", 3), SamplingConfig(), pair=tiny_pair, max_new_tokens=24,
                     hindsight=session_hindsight)
    src.prepare(lambda *_: None)
    seen = []
    for ev in src.events("hello"):
        seen.append(ev)
        assert src.hindsight is None  # not while the turn runs
    assert isinstance(src.hindsight, Hindsight) and src.hindsight.applicable and src.hindsight.tokens == 24
    # sampling switched on during a turn: its text is not the greedy one
    for ev in src.events("again"):
        if isinstance(ev, StepEvent) and ev.step == 0:
            src.request(sampling=SamplingConfig(temperature=0.9))
    assert not src.hindsight.applicable and "greedy" in src.hindsight.reason


def test_the_check_comes_back_from_the_decoder_process(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    src = LiveSource(PolicySettings.build("specdecode", 2), SamplingConfig(), max_new_tokens=16,
                     load_kwargs={"target": str(t), "draft": str(d), "device": "cpu", "dtype": "float32",
                                  "threads": 1}, hindsight=session_hindsight)
    assert src.process
    try:
        src.prepare(lambda *_: None)
        events = list(src.events("hello"))
        assert isinstance(events[0], SessionHeader)
        assert src.hindsight is not None and src.hindsight.applicable and src.hindsight.tokens == 16
    finally:
        src.close()


def _run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["run", *argv])
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    return " ".join(cap.err.split())   # piped: the summary and the oracle line go to stderr, the text to stdout


def test_run_prints_the_oracle_line_for_greedy_sessions(tiny_pair_dirs, capsys):
    t, d = tiny_pair_dirs
    common = ["abc", "--target", str(t), "--draft", str(d), "--device", "cpu", "-n", "16", "--raw"]
    out = _run(capsys, *common, "-t", "0")
    assert "oracle: this session reached" in out and "of the hindsight-optimal γ" in out
    out = _run(capsys, *common, "-t", "0.7")
    assert "oracle: applies to greedy decoding only (this session sampled at T=0.7)" in out


def test_run_prints_the_oracle_line_for_prompt_lookup_sessions_too(tiny_pair_dirs, capsys):
    # no draft model is loaded: the trace is prompt lookup's proposals, recomputed from the session's own text
    t, _ = tiny_pair_dirs
    out = _run(capsys, "abcabcabcabc", "--target", str(t), "--drafter", "prompt-lookup", "--device", "cpu", "-n", "16",
               "--raw", "-t", "0")
    assert "oracle: this session reached" in out and "check failed" not in out
    share = float(out.split("oracle: this session reached ")[1].split()[0])
    assert 0 < share <= 1.0
