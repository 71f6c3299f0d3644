"""The peers' sessions record their parameters and each drafted token's entropy, and replay with them (issue 27)."""

from __future__ import annotations

import pytest

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.session.replay import ReplaySource, recorded_settings

PEERS = [("p-min", 4, {"p_min": 0.6}), ("adaedl", 5, {"edl_lambda": 0.4, "edl_target": 0.8}),
         ("svip", 6, {"svip_h": 0.5}), ("ema-tiers", 3, {"gamma_max": 6}), ("ucb", 4, {"gamma_min": 2, "gamma_max": 5})]


@pytest.mark.parametrize("method,gamma0,params", PEERS)
def test_a_peer_session_round_trips_with_its_parameters_and_entropies(tiny_pair, tmp_path, method, gamma0, params):
    s = PolicySettings.build(method, gamma0, **params)
    path = tmp_path / f"{method}.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(SpeculativeDecoder(tiny_pair, s, SamplingConfig()).generate("abc", max_new_tokens=16))
    session = read_recording(path).sessions[0]
    assert session.header.method == method and session.summary.tokens == 16
    for name, value in params.items():
        assert session.header.params[name] == value
    drafted = [tok for st in session.steps for tok in st.drafted]
    assert drafted and all(tok.entropy is not None and tok.entropy >= 0 for tok in drafted)
    source = ReplaySource(path)
    source.prepare()
    assert source.settings == s
    header = source.sessions[0].header
    assert recorded_settings(header.method, header.gamma0, header.params, header.sampling)[0] == s
