"""A real instruct model end to end: its end-of-turn token is never text, chat history is well-formed ChatML,
`--pair smollm2` runs from the CLI, and the GGUF conversion is done once and reused."""

from __future__ import annotations

import json

import pytest
import torch

from gammatune_tui import cli
from gammatune_tui.engine.common.kernel_path import native_bf16_cpu
from gammatune_tui.engine.loading import gguf
from gammatune_tui.engine.events import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.render.printer import transcript_text
from gammatune_tui.session.live import LiveSource
from gammatune_tui.session.recording import event_line
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.common.sampling import SamplingConfig

from real_prompts import CAPITAL

IM_END = "<|im_end|>"


def _turn(source, text):
    return [e for e in source.events(text) if isinstance(e, (SessionHeader, StepEvent, SessionSummary))]


def invoke(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_two_turns_make_well_formed_chatml_and_show_no_end_of_turn(smollm2_pair):
    source = LiveSource(PolicySettings.build("gammatune+", 4), SamplingConfig(temperature=0.0), pair=smollm2_pair,
                        process=False, max_new_tokens=24)
    source.prepare(lambda stage, frac: None)
    first = _turn(source, CAPITAL)
    second = _turn(source, "And of Italy?")
    for events in (first, second):
        summary = events[-1]
        assert isinstance(summary, SessionSummary) and summary.stop_reason == "eos"   # it ended its turn itself
        steps = [e for e in events if isinstance(e, StepEvent)]
        assert steps[-1].emitted[-1].id in smollm2_pair.eos_ids                       # the id is in the events
        assert IM_END not in summary.text and summary.text.strip()
        assert all(IM_END not in t.text for s in steps for t in s.emitted)
        assert IM_END not in transcript_text(events).plain                            # what `run` prints
        for e in steps + [summary]:                                                   # what a recording keeps
            d = json.loads(event_line(e))
            assert all(IM_END not in t["text"] for t in d.get("emitted", []))
            assert IM_END not in d.get("text", "")
    text = smollm2_pair.tokenizer.decode(smollm2_pair.encode_prompt(source.messages))
    # system, user, assistant, user, assistant: each closed exactly once, never twice in a row
    assert text.count(IM_END) == 5 and text.count("<|im_start|>") == 6   # + the next assistant turn, open
    assert IM_END + IM_END not in text
    assert f"{source.messages[1]['content']}{IM_END}\n<|im_start|>user\nAnd of Italy?{IM_END}" in text


def test_run_pair_smollm2_from_the_cli_reuses_the_conversion(smollm2_pair, smollm2_file, capsys, tmp_path):
    converted = gguf.converted_path(smollm2_file)
    assert gguf.is_converted(converted)           # the session's pair converted it into the suite's cache
    stamp = (converted / "model.safetensors").stat().st_mtime_ns
    record = tmp_path / "r.jsonl"
    code, out, err = invoke(["run", "--pair", "smollm2", "-n", "16", "--threads", "1", "--record", str(record),
                             CAPITAL], capsys)
    assert code == 0, err
    assert "Paris" in out and IM_END not in out and IM_END not in err
    assert "draft self:int4" in err                # the preset drafts with its own int4 self-draft (issue 26)
    native = native_bf16_cpu() and torch.backends.mkldnn.is_available()   # auto's precision, named with why
    assert ("(bfloat16, auto for this CPU's " if native else "(float32, ") in " ".join(err.split())
    assert (converted / "model.safetensors").stat().st_mtime_ns == stamp   # read from the cache, not converted again
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert all(IM_END not in t["text"] for d in lines for t in d.get("emitted", []))
    assert lines[0]["target"] == "SmolLM2-135M-Instruct (Q4_1 GGUF)"   # a name, not a site-packages path
