"""A hybrid family whose prefill is not its one-token path still decodes exactly what its `generate` gives.

zamba2's pass over a prompt and its pass over all but the last token followed
by a one-token step differ by more than rounding (0.06 at a logit scale of 10,
the same in float64). The decoder used to prefill all but the prompt's last
token, so its greedy output left `generate`'s (issue 40 row 1: token 10 of 32
on a code prompt, on every drafter), while the load check let it through. The
hybrid runner now runs `generate`'s own passes for such a family: the whole
prompt in one pass, then one token at a time (engine/runners/hybrid_probe.py).
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.loading.models import ModelPair
from gammatune_tui.engine.runners.hf_compat import cache_kw
from gammatune_tui.engine.runners.hybrid_probe import probe

CODE = "import os\nimport sys\n\ndef main():\n    path = sys.argv[1]\n    for name in os.listdir(path):\n        print(name)\n"


@pytest.fixture(scope="module")
def zamba2():
    """The issue's model: 3 layers (mamba, hybrid, mamba), 96 wide, initializer_range 0.3, seed 5."""
    from transformers import AutoModelForCausalLM, Zamba2Config

    cfg = Zamba2Config(vocab_size=4096, hidden_size=96, num_hidden_layers=3,
                       layers_block_type=["mamba", "hybrid", "mamba"], initializer_range=0.3,
                       bos_token_id=0, eos_token_id=1, pad_token_id=1)
    torch.manual_seed(5)
    return AutoModelForCausalLM.from_config(cfg).eval()


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    from gammatune_tui.resources import demo_pair_dir

    return AutoTokenizer.from_pretrained(str(demo_pair_dir() / "target"))


def test_the_families_prefill_is_not_its_one_token_path(zamba2, tok):
    """The property itself, in plain transformers: why the decoder must prefill as `generate` does."""
    from transformers import DynamicCache

    x = torch.tensor([tok(CODE).input_ids])
    with torch.no_grad():
        whole = zamba2(x).logits[0, -1]
        cache = DynamicCache(config=zamba2.config)
        zamba2(x[:, :-1], **cache_kw(zamba2, cache), use_cache=True)
        step = zamba2(x[:, -1:], **cache_kw(zamba2, cache), use_cache=True).logits[0, -1]
    assert float((whole - step).abs().max()) > 1e-3 * float(whole.abs().max())
    assert probe(zamba2).per_token and probe(zamba2).refused is None


@pytest.mark.parametrize("drafter", ["self:int8", "prompt-lookup"])
def test_greedy_output_is_generates_on_a_code_prompt(zamba2, tok, drafter):
    ids = tok(CODE).input_ids
    x = torch.tensor([ids])
    want = zamba2.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=12,
                           eos_token_id=[1])[0, len(ids):].tolist()
    pair = ModelPair(target=zamba2, draft=None, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     eos_ids=frozenset({1}), name_target="zamba2", name_draft="-")
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig(), drafter=drafter)
    got = [t.id for e in dec.generate(ids, max_new_tokens=12) if isinstance(e, StepEvent) for t in e.emitted]
    assert got == want


def test_a_self_draft_whose_copy_prefills_otherwise_is_not_refused_for_the_family(tok):
    """Issue 40 row 10's symptom: the int8 copy of a hybrid (computing in bfloat16) disagreed with itself
    between its prefill and its one-token path, and the draft was refused with a reason blaming the family
    ("no decoder can match its `generate`"), though the family decodes exactly. A draft's passes never decide a
    token: the copy now runs `generate`'s passes and drafts, and the output is the target's."""
    from gammatune_tui.engine.loading.families import tiny_model

    target = tiny_model("zamba2", seed=5, num_hidden_layers=3, layers_block_type=["mamba", "hybrid", "mamba"],
                        hybrid_layer_ids=[1], hidden_size=96, initializer_range=0.3, n_mamba_heads=3)
    ids = tok(CODE).input_ids
    x = torch.tensor([ids])
    want = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=8,
                           eos_token_id=[1])[0, len(ids):].tolist()
    pair = ModelPair(target=target, draft=None, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     eos_ids=frozenset({1}), name_target="zamba2", name_draft="-")
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig(), drafter="self:int8")
    got = [t.id for e in dec.generate(ids, max_new_tokens=8) if isinstance(e, StepEvent) for t in e.emitted]
    assert got == want


@pytest.mark.parametrize("drafter", ["self:int8", "prompt-lookup"])
def test_bamba_given_generates_positions_decodes_exactly(tok, drafter):
    """bamba was refused as disagreeing with itself (2.5 at a logit scale of 6): left to itself its forward numbers
    a one-token step's position from 0, and the runner gave no positions. Given them, as `generate` gives them, its
    passes agree and its output is `generate`'s."""
    from gammatune_tui.engine.loading.families import tiny_model

    target = tiny_model("bamba", seed=1)
    ids = tok(CODE).input_ids
    x = torch.tensor([ids])
    want = target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=12,
                           eos_token_id=[1])[0, len(ids):].tolist()
    pair = ModelPair(target=target, draft=None, tokenizer=tok, device=torch.device("cpu"), dtype=torch.float32,
                     eos_ids=frozenset({1}), name_target="bamba", name_draft="-")
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), SamplingConfig(), drafter=drafter)
    got = [t.id for e in dec.generate(ids, max_new_tokens=12) if isinstance(e, StepEvent) for t in e.emitted]
    assert got == want


def test_in_half_precision_the_familys_float32_math_decides_how_windows_run(zamba2, monkeypatch):
    """A Qwen3.5-0.8B shape in bf16 failed the half-precision check by rounding alone (its paths 0.05–0.09 apart
    at a logit scale of 3, half of bf16 `generate`'s own error) and ran one pass per token, which costs the whole
    speed-up. Now a float32 twin of the config decides: the family's window is its one-token path, so windows go
    in one pass; where the twin disagrees, or none can be built, they stay per token."""
    from gammatune_tui.engine.runners import hybrid_probe
    from tiny_models import make_family

    qwen = make_family("qwen3_5_text", 0, vocab=512, hidden=64, layers=4,
                       extra={"layer_types": ["linear_attention"] * 3 + ["full_attention"]}).to(torch.bfloat16)
    runs = hybrid_probe._runs

    def rounded(model, per_token, ids, p):   # the bf16 window as the real shape rounds it: 3 % of the scale off
        want, got = runs(model, per_token, ids, p)
        if model is qwen and not per_token:
            got = [g + 0.03 * max(1.0, float(g.abs().max())) for g in got]
        return want, got

    monkeypatch.setattr(hybrid_probe, "_runs", rounded)
    assert hybrid_probe._probe(qwen).per_token is False
    monkeypatch.setattr(hybrid_probe, "_twin_agrees", lambda model: False)
    assert hybrid_probe._probe(qwen).per_token is True
    monkeypatch.undo()
    twins = []
    monkeypatch.setattr(hybrid_probe, "_runs", lambda m, *a: twins.append(m) or runs(m, *a))
    assert hybrid_probe._twin_agrees(zamba2) is False   # zamba2's window is not its one-token path in float32
    assert twins and twins[0] is not zamba2 and twins[0].dtype == torch.float32   # built and run, not refused
