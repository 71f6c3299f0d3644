"""A costaware session with plain target steps (γ = 0) records, reads back and replays with every panel drawn."""

from __future__ import annotations

from gammatune_tui.engine import SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.policies import CostAware, PolicyParams
from gammatune_tui.session.recording import RecordingWriter, read_recording
from gammatune_tui.ui.app import make_replay_app

from uihelpers import plain, run, wait_until


class Scripted(CostAware):
    """costaware whose plan is overridden by a script with plain steps (so the test does not hang on timing)."""

    def __init__(self, windows):
        super().__init__(2, PolicyParams.build(gamma_min=1, gamma_max=8))
        self.windows, self.i = windows, 0

    def update(self, accepted, drafted, window=()):
        super().update(accepted, drafted, window)
        self.i += 1
        self.gamma = self.windows[self.i % len(self.windows)]


def test_replay_of_plain_steps(tiny_pair, tmp_path):
    events = list(SpeculativeDecoder(tiny_pair, Scripted([0, 3, 0, 2]), SamplingConfig()).generate(
        "def f(x):", max_new_tokens=24))
    path = tmp_path / "plain.jsonl"
    with RecordingWriter(path) as w:
        w.write_all(events)
    rec = read_recording(path)
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert any(s.gamma == 0 for s in steps)
    app = make_replay_app(rec, speed=0)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.screen
            await wait_until(pilot, lambda: screen.stats.summary is not None and not screen.generating)
            # the player's line refreshes on a 0.25 s timer: on a loaded machine, wait for it rather than a fixed pause
            last = f"step {len(steps)}/{len(steps)}"
            await wait_until(pilot, lambda: last in plain(screen.query_one("#replay-info")), what=f"'{last}' shown")

    run(scenario())
