"""An adaptive-k session records its own parameters and reads back with the schema-1 reader."""

from __future__ import annotations

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.stats import stats_of


def test_adaptive_k_session_round_trips(tiny_pair, tmp_path):
    s = PolicySettings.build("adaptive-k", 3, gamma_min=1, alpha_prior=0.6, cooldown=0)
    events = list(SpeculativeDecoder(tiny_pair, s, SamplingConfig()).generate("abc", max_new_tokens=24))
    path = tmp_path / "ak.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(events)
    rec = read_recording(path)
    assert rec.warning == "" and len(rec.sessions) == 1
    session = rec.sessions[0]
    assert session.header.method == "adaptive-k"
    assert session.header.params["alpha_prior"] == 0.6 and session.header.params["ema_alpha"] == 0.3
    assert all(st.params["cooldown"] == 0 for st in session.steps)
    assert stats_of(rec.events).tokens == session.summary.tokens == 24
    # the settings a replay rebuilds from the recorded parameters are the ones that ran
    p = dict(session.header.params)
    assert PolicySettings.build("adaptive-k", p.pop("gamma0"), **p) == s
