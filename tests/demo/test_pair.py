"""The shipped demo pair: installed, small, loads offline, and speculative greedy equals target greedy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from safetensors import safe_open

from gammatune_tui.demo import DRAFT_DIR, PAIR_DIR, TARGET_DIR
from gammatune_tui.resources import demo_pair_installed
from gammatune_tui.demo.measure import draft_matches, plain_greedy


def test_pair_is_installed_and_small():
    assert demo_pair_installed(), f"demo pair missing under {PAIR_DIR}"
    total = sum(f.stat().st_size for f in PAIR_DIR.rglob("*") if f.is_file())
    assert total <= 40 * 2**20
    for d in (TARGET_DIR, DRAFT_DIR):
        with safe_open(str(d / "model.safetensors"), "pt") as st:
            assert {str(st.get_tensor(k).dtype) for k in st.keys()} == {"torch.float16"}
        gen = json.loads((d / "generation_config.json").read_text())
        assert gen.get("eos_token_id") is not None and gen.get("bos_token_id") is not None
    assert (TARGET_DIR / "tokenizer.json").read_bytes() == (DRAFT_DIR / "tokenizer.json").read_bytes()


def test_pair_loads_offline_through_the_engine():
    """A fresh interpreter with the hub switched off and no cache: load_pair(demo=True) must still work."""
    code = (
        "from gammatune_tui.engine import load_pair\n"
        "p = load_pair(demo=True, threads=1)\n"
        "n = lambda m: sum(x.numel() for x in m.parameters())\n"
        "print(p.is_demo, n(p.target), n(p.draft), p.tokenizer.decode(p.encode_prompt('def f(x):', raw=True)))\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", OMP_NUM_THREADS="1",
               HF_HOME=os.path.join(os.sep, "nonexistent-gammatune-hf-home"))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    is_demo, nt, nd, text = res.stdout.strip().split(" ", 3)
    assert is_demo == "True" and text == "def f(x):"
    assert 5_000_000 <= int(nt) <= 10_000_000
    assert 5 <= int(nt) / int(nd) <= 10


@pytest.fixture(scope="module")
def demo_pair():
    from gammatune_tui.engine import load_pair

    return load_pair(demo=True, device="cpu", dtype="float32", threads=1)


def test_speculative_greedy_equals_target_greedy(demo_pair):
    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder
    from gammatune_tui.engine.events import StepEvent

    prompt = "class Stack:\n    \"\"\"A simple last-in, first-out stack.\"\"\"\n\n    def __init__(self):\n"
    ids = demo_pair.encode_prompt(prompt, raw=True)
    plain = plain_greedy(demo_pair, ids, 48).token_ids
    for method in ("specdecode", "gammatune+"):
        dec = SpeculativeDecoder(demo_pair, PolicySettings.build(method, gamma0=4), SamplingConfig(temperature=0.0))
        got = [e.id for ev in dec.generate(prompt, max_new_tokens=48) if isinstance(ev, StepEvent) for e in ev.emitted]
        assert got == plain, method


def test_draft_agrees_often_but_not_always(demo_pair):
    """The pair is useful for the demo only if the draft is mostly, not always, right."""
    prompt = "def read_lines(path, encoding='utf-8'):\n    "
    ids = demo_pair.encode_prompt(prompt, raw=True)
    path = plain_greedy(demo_pair, ids, 64).token_ids
    m = draft_matches(demo_pair.draft, ids, path)
    assert 0.3 < sum(m) / len(m) < 1.0


def test_target_completes_code_with_code(demo_pair):
    prompt = "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"
    ids = demo_pair.encode_prompt(prompt, raw=True)
    text = demo_pair.tokenizer.decode(plain_greedy(demo_pair, ids, 40).token_ids)
    assert any(kw in text for kw in ("return", "if ", "=", "for ")), text
