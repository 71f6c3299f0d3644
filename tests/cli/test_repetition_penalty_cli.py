"""`--repetition-penalty` on run, compare and chat (issue 24 row 15): lossless against generate with the same penalty."""

from __future__ import annotations

import json

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from gammatune_tui.engine.events import StepEvent, event_from_json
from clihelpers import invoke

PROMPT = "def f(x):\n    return x\n\ndef"


def test_run_with_a_penalty_is_generate_with_it(capsys, pair_args, tiny_pair_dirs):
    code, out, err = invoke(["run", PROMPT, *pair_args, "-n", "30", "--raw", "-t", "0", "--json",
                             "--repetition-penalty", "1.5"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    assert events[0].sampling["repetition_penalty"] == 1.5   # recorded in the header
    got = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
    t_dir = tiny_pair_dirs[0]
    tok, target = AutoTokenizer.from_pretrained(t_dir), AutoModelForCausalLM.from_pretrained(t_dir)
    ids = tok(PROMPT, return_tensors="pt").input_ids
    want = target.generate(ids, max_new_tokens=30, do_sample=False, repetition_penalty=1.5)[0, ids.shape[1]:]
    plain = target.generate(ids, max_new_tokens=30, do_sample=False)[0, ids.shape[1]:]
    assert got == want.tolist() and not torch.equal(want, plain)


def test_compare_with_a_penalty_stays_lossless(capsys, pair_args):
    code, out, err = invoke(["compare", PROMPT, *pair_args, "-n", "24", "--raw", "-t", "0", "--print",
                             "--methods", "specdecode,gammatune+", "--repetition-penalty", "1.5"], capsys)
    assert code == 0, err
    assert "checked against target-only" in out and "NOT lossless" not in out
    assert "--repetition-penalty 1.5" in out   # the settings line names it


def test_a_bad_penalty_is_one_line_naming_the_flag(capsys, pair_args):
    for cmd in ("run", "compare", "chat"):
        code, out, err = invoke([cmd, "hi", *pair_args, "--repetition-penalty", "0"], capsys)
        assert code == 2, (cmd, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "--repetition-penalty must be" in lines[0], (cmd, err)


def test_bench_refuses_a_penalty_it_would_not_apply(capsys, pair_args):
    code, out, err = invoke(["bench", *pair_args, "--simulate", "--repetition-penalty", "1.2"], capsys)
    assert code == 2 and "--repetition-penalty" in err and len(err.strip().splitlines()) == 1
