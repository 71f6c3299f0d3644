"""One loop per job: plain target decoding, the shared vocabulary, the settings mailbox, each written once.

What these tests can hold: every plain baseline the package measures
(compare's reference row, the chat's plain step, the bench's target-only
rows, the traces' plain baseline, the demo pair's measure script) is
`plain_decode` and gives its tokens; the `min` of two vocabulary sizes is
written in one place; both players of steps (the decoder, the synthetic
source) take their pending settings through `SettingsMailbox`. They cannot
hold that nobody writes a new plain loop elsewhere; a reviewer must.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
from gammatune_tui.engine.events import StepEvent
from test_decoder import PROMPT, target_greedy

PACKAGE = Path(__file__).resolve().parents[2] / "gammatune_tui"
N = 40


@pytest.fixture(scope="module")
def prompt_ids(tiny_pair):
    return tiny_pair.encode_prompt(PROMPT, raw=True)


def test_every_plain_baseline_gives_the_one_loops_tokens(tiny_pair, prompt_ids):
    from gammatune_tui.bench.live.protocol import PromptIds, run_plain
    from gammatune_tui.bench.sim.trace_record import target_run
    from gammatune_tui.demo.measure import plain_greedy
    from gammatune_tui.engine.plain import plain_decode

    reference = target_greedy(tiny_pair, prompt_ids, N, eos=list(tiny_pair.eos_ids))
    runner = plain_decode(tiny_pair, prompt_ids, N)
    paper = plain_decode(tiny_pair, prompt_ids, N, transformers_cache=True)
    assert runner.token_ids == paper.token_ids == reference
    assert runner.stop_reason == paper.stop_reason
    assert len(paper.token_s) == paper.tokens and 0 < paper.prefill_s < paper.wall_s

    bench = run_plain(tiny_pair, PromptIds("p", prompt_ids), N)
    assert bench.output_ids == reference and bench.tokens == bench.steps == len(reference)
    assert bench.stop_reason == paper.stop_reason
    token_s: list[float] = []
    toks, prefill_s, total_s = target_run(tiny_pair, prompt_ids, N, tiny_pair.eos_ids, token_s)
    assert toks == reference and len(token_s) == len(toks) and 0 < prefill_s < total_s
    assert plain_greedy(tiny_pair, prompt_ids, N).token_ids == reference


@pytest.mark.parametrize("paper", [False, True])
def test_the_one_loop_stops_on_eos_on_either_path(tiny_pair, prompt_ids, paper):
    from gammatune_tui.engine.plain import plain_decode

    full = plain_decode(tiny_pair, prompt_ids, N, transformers_cache=paper, eos_ids=())
    assert full.tokens == N and full.stop_reason == "max_new_tokens"
    cut = plain_decode(tiny_pair, prompt_ids, N, transformers_cache=paper, eos_ids={full.token_ids[3]})
    first = full.token_ids.index(full.token_ids[3])
    assert cut.token_ids == full.token_ids[:first + 1] and cut.stop_reason == "eos"


def test_each_plain_baseline_calls_the_one_loop(tiny_pair, prompt_ids, monkeypatch):
    """The bench's target-only row, the traces' baseline, the measure script and the chat's plain step are
    `plain_decode` (the first three on the paper's transformers-cache path), not loops of their own."""
    from gammatune_tui.bench.live import protocol
    from gammatune_tui.bench.sim.trace_record import target_run
    from gammatune_tui.demo import measure
    from gammatune_tui.engine import plain

    one_loop = plain.plain_decode
    calls: list[bool] = []

    def spy(*args, **kw):
        calls.append(bool(kw.get("transformers_cache", False)))
        return one_loop(*args, **kw)

    for module in (plain, protocol, measure):
        monkeypatch.setattr(module, "plain_decode", spy)
    protocol.run_plain(tiny_pair, protocol.PromptIds("p", prompt_ids), 4)
    target_run(tiny_pair, prompt_ids, 4, tiny_pair.eos_ids)
    measure.plain_greedy(tiny_pair, prompt_ids, 4)
    plain.plain_step_seconds(tiny_pair, steps=3)
    assert calls == [True, True, True, False]


def _vocab_min_sites() -> list[str]:
    """Every `min(…)` whose arguments read two `vocab_size`s: the rule of the ids both models speak."""
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "min":
                reads = sum(isinstance(n, ast.Attribute) and n.attr == "vocab_size"
                            for arg in node.args for n in ast.walk(arg))
                if reads >= 2:
                    sites.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return sites


def test_the_ids_both_models_speak_are_written_once():
    sites = _vocab_min_sites()
    assert len(sites) == 1 and sites[0].startswith("engine/common/vocab.py"), sites


def test_shared_vocab_is_the_smaller_or_the_targets_alone(tiny_pair):
    from gammatune_tui.engine.common.vocab import shared_vocab

    class Sized:
        def __init__(self, n):
            self.config = type("Config", (), {"vocab_size": n})()

    assert shared_vocab(Sized(260), Sized(256)) == shared_vocab(Sized(256), Sized(300)) == 256
    assert shared_vocab(Sized(260), None) == 260


def test_later_asks_win_part_by_part_and_a_take_empties_the_mailbox():
    from gammatune_tui.engine.mailbox import SettingsMailbox

    box = SettingsMailbox()
    a, b = PolicySettings.build("specdecode", 3), PolicySettings.build("gammatune+", 5)
    hot = SamplingConfig(temperature=0.7)
    assert box.take() is None
    box.put(a)
    box.put(sampling=hot)
    box.put(b)
    assert box.take() == (b, hot)
    assert box.take() is None


def test_the_decoder_and_the_synthetic_source_share_the_mailbox(tiny_pair, monkeypatch):
    """A request reaches each player's next step through `SettingsMailbox` (put on request, taken per step)."""
    from gammatune_tui.engine import mailbox
    from gammatune_tui.session.synthetic import SyntheticSource

    seen: list[str] = []
    put, take = mailbox.SettingsMailbox.put, mailbox.SettingsMailbox.take
    monkeypatch.setattr(mailbox.SettingsMailbox, "put", lambda self, *a: (seen.append("put"), put(self, *a))[1])
    monkeypatch.setattr(mailbox.SettingsMailbox, "take", lambda self: (seen.append("take"), take(self))[1])
    wanted = PolicySettings.build("specdecode", 2)
    for player in (SpeculativeDecoder(tiny_pair, PolicySettings.build("gammatune+", 4), SamplingConfig()),
                   SyntheticSource("gammatune+")):
        seen.clear()
        steps = (ev for ev in player.generate(PROMPT, max_new_tokens=12) if isinstance(ev, StepEvent))
        first = next(steps)
        player.request(wanted)
        second = next(steps)
        assert (first.method, second.method) == ("gammatune+", "specdecode") and second.settings_changed
        assert "put" in seen and seen.count("take") >= 2, type(player).__name__
