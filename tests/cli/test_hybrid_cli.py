"""A hybrid (linear-attention) model folder from the command line: exact with a self-draft, refused in one line
where its cache cannot be rewound."""

from __future__ import annotations

import json

import torch

from gammatune_tui.engine.events import SessionHeader, StepEvent, event_from_json
from clihelpers import invoke
from tiny_models import make_byte_tokenizer, make_family


def _folder(tmp_path, family):
    model = make_family(family, 0)
    out = tmp_path / family
    model.save_pretrained(out)
    make_byte_tokenizer().save_pretrained(out)
    return model, str(out)


def test_run_a_hybrid_with_an_int8_self_draft_is_the_models_own_greedy_output(capsys, tmp_path):
    model, folder = _folder(tmp_path, "qwen3_5_text")
    code, out, err = invoke(["run", "--target", folder, "--draft", "self:int8", "--device", "cpu", "--threads", "1",
                             "-t", "0", "-n", "16", "--raw", "abcabcabc", "--json"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    header = events[0]
    assert isinstance(header, SessionHeader) and header.runner.startswith("hybrid")
    got = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
    x = torch.tensor([header.prompt_ids])
    ref = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=16,
                         eos_token_id=1)[0, x.shape[1]:].tolist()
    assert got == ref[:len(got)] and (len(got) == 16 or got[-1] == 1)


def test_run_a_family_whose_cache_cannot_be_rewound_is_one_line_exit_2(capsys, tmp_path):
    _, folder = _folder(tmp_path, "minimax")
    code, out, err = invoke(["run", "--target", folder, "--draft", "self:int8", "--device", "cpu", "-n", "4",
                             "--raw", "abc"], capsys)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "minimax" in lines[0] and "Traceback" not in err


def test_bench_simulates_and_runs_a_hybrid_pair_exactly(capsys, tmp_path):
    model, folder = _folder(tmp_path, "recurrent_gemma")   # a family whose windows run token by token
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "turns": ["abcabcabcab"]}\n')
    out = tmp_path / "sim.json"
    code, _, err = invoke(["bench", "--simulate", "--check-live", "1", "--target", folder, "--draft", "self:int8",
                           "--device", "cpu", "--prompts", str(prompts), "-n", "10", "--gammas", "3",
                           "--methods", "specdecode", "--no-baselines", "--raw", "-o", str(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["live_check"]["step_exact"] == data["live_check"]["total"] > 0
    live = tmp_path / "live.json"
    code, _, err = invoke(["bench", "--target", folder, "--draft", "self:int8", "--device", "cpu", "--prompts",
                           str(prompts), "-n", "6", "--gammas", "3", "--methods", "specdecode", "--raw",
                           "-o", str(live)], capsys)
    assert code == 0, err
    assert "assisted generation refuses stateful models (RecurrentGemmaForCausalLM)" in " ".join(err.split())
    checks = json.loads(live.read_text())["live"]["checks"]
    assert checks["runs"] == 2 and checks["outputs_differing_from_target_only"] == []
