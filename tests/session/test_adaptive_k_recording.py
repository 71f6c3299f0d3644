"""An adaptive-k session records its own parameters and reads back with the schema-1 reader."""

from __future__ import annotations

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.replay import ReplaySource, recorded_settings
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


def test_replay_rebuilds_adaptive_k_parameters_from_a_recording(tiny_pair, tmp_path):
    """What the replay's read-only controls show is what ran: adaptive-k's own three survive the round trip."""
    s = PolicySettings.build("adaptive-k", 5, gamma_min=2, ema_alpha=0.5, alpha_prior=0.6, cooldown=0)
    path = tmp_path / "ak.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(SpeculativeDecoder(tiny_pair, s, SamplingConfig()).generate("abc", max_new_tokens=12))
    source = ReplaySource(path)
    source.prepare()
    assert source.settings == s
    header = source.sessions[0].header
    settings, sampling = recorded_settings(header.method, header.gamma0, header.params, header.sampling)
    assert settings == s and settings.params.cooldown == 0 and float(settings.params.ema_alpha) == 0.5
    assert sampling is not None and sampling.greedy
