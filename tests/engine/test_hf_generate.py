"""gammatune_tui.hf: `generate(..., custom_generate=gammatune_generate)` returns what `generate` returns.

Under tests/engine so that `make test` runs it on the oldest supported
transformers (5.17) as well as the installed one: what reaches a
`custom_generate` callable is transformers' business and changes between
versions. Greedy output must be token-identical to the target's own
`generate` with the same processors and stopping criteria; sampled output
must follow the target's law (chi-square, with the processors applied).
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
import torch
from transformers import (AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList, StoppingCriteriaList,
                          TextIteratorStreamer, TextStreamer)
from transformers.generation.stopping_criteria import StopStringCriteria

from gammatune_tui.engine import SessionHeader, SessionSummary, StepEvent
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.common.sampling_config import SamplingConfig
from gammatune_tui.errors import InvalidParameter
from gammatune_tui.hf import gammatune_generate, generate

from test_logits_processing import PROMPT_IDS, joint_law
from test_sampling import chi2_test

PROMPT = "def add(a, b):\n    return a + b\n\ndef"


@pytest.fixture(scope="module")
def models(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    tok = AutoTokenizer.from_pretrained(t)
    return (AutoModelForCausalLM.from_pretrained(t).eval(), AutoModelForCausalLM.from_pretrained(d).eval(), tok)


def ids_of(tok, text=PROMPT):
    return tok(text, return_tensors="pt").input_ids


SETTINGS = [
    {},
    {"repetition_penalty": 1.4},
    {"no_repeat_ngram_size": 2},
    {"bad_words_ids": [[40], [70]]},
    {"min_new_tokens": 30, "eos_token_id": [1, 47]},   # an EOS list, held off by min_new_tokens
    {"eos_token_id": [1, 131]},                        # an EOS the greedy text reaches early
    {"max_length": 60},
    {"repetition_penalty": 1.2, "sequence_bias": {(131,): -5.0}},
]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: ",".join(kw) or "plain")
@pytest.mark.parametrize("method", ["gammatune+", "specdecode"])
def test_greedy_is_token_identical_to_generate(models, kw, method):
    target, draft, tok = models
    ids = ids_of(tok)
    budget = {} if "max_length" in kw else {"max_new_tokens": 40}
    want = target.generate(ids, do_sample=False, **budget, **kw)
    got = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, gamma_method=method,
                          do_sample=False, **budget, **kw)
    assert torch.equal(got, want)


def test_the_users_generation_config_is_honoured(models):
    from transformers import GenerationConfig

    target, draft, tok = models
    ids = ids_of(tok)
    config = GenerationConfig(max_new_tokens=25, do_sample=False, repetition_penalty=1.3, no_repeat_ngram_size=3,
                              eos_token_id=[1, 131])
    want = target.generate(ids, generation_config=config)
    got = target.generate(ids, generation_config=config, custom_generate=gammatune_generate, draft_model=draft)
    assert torch.equal(got, want)


def test_prompt_lookup_and_the_plain_function_are_identical_too(models):
    target, _, tok = models
    ids = ids_of(tok, PROMPT * 3)
    want = target.generate(ids, do_sample=False, max_new_tokens=30, repetition_penalty=1.1)
    got = generate(target, ids, draft_model="prompt-lookup", do_sample=False, max_new_tokens=30,
                   repetition_penalty=1.1, gamma0=3, tau=0.5)
    assert torch.equal(got, want)


def test_stop_strings_and_stopping_criteria_stop_where_generate_does(models):
    target, draft, tok = models
    ids = ids_of(tok)
    full = tok.decode(target.generate(ids, do_sample=False, max_new_tokens=40)[0, ids.shape[1]:])
    stop = full[7:9]   # two characters the greedy answer reaches mid-way: a stop inside a window
    want = target.generate(ids, do_sample=False, max_new_tokens=40, stop_strings=[stop], tokenizer=tok)
    assert want.shape[1] < ids.shape[1] + 40
    got = generate(target, ids, draft_model=draft, do_sample=False, max_new_tokens=40, stop_strings=[stop], tokenizer=tok)
    assert torch.equal(got, want)
    crit = StoppingCriteriaList([StopStringCriteria(tok, [stop])])
    got2 = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, do_sample=False,
                           max_new_tokens=40, stopping_criteria=crit)
    assert torch.equal(got2, want)


def test_scores_and_logits_are_generates(models):
    target, draft, tok = models
    ids = ids_of(tok)
    kw = dict(do_sample=False, max_new_tokens=12, return_dict_in_generate=True, output_scores=True,
              output_logits=True, repetition_penalty=1.3)
    want = target.generate(ids, **kw)
    got = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, **kw)
    assert type(got).__name__ == "GenerateDecoderOnlyOutput"
    assert torch.equal(got.sequences, want.sequences)
    assert len(got.scores) == len(want.scores) == len(got.logits) == 12
    for a, b in zip(got.scores + got.logits, want.scores + want.logits):
        assert a.shape == b.shape == (1, target.config.vocab_size)
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-3)


def test_a_streamer_given_to_generate_prints_the_answer(models, capsys):
    """transformers drops `streamer` before calling a custom_generate callable; gammatune still finds it."""
    target, draft, tok = models
    ids = ids_of(tok)
    out = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, do_sample=False,
                          max_new_tokens=20, streamer=TextStreamer(tok, skip_prompt=True))
    printed = capsys.readouterr().out
    assert printed == tok.decode(out[0, ids.shape[1]:]) + "\n"


def test_token_streamer_in_a_thread(models):
    target, draft, tok = models
    ids = ids_of(tok)
    streamer = TextIteratorStreamer(tok, skip_prompt=True)
    result = {}
    worker = threading.Thread(target=lambda: result.update(out=target.generate(
        ids, custom_generate=gammatune_generate, draft_model=draft, max_new_tokens=25, do_sample=False,
        token_streamer=streamer)))
    worker.start()
    text = "".join(streamer)
    worker.join()
    assert text == tok.decode(result["out"][0, ids.shape[1]:])


def test_events_callback_and_policy_parameters(models):
    target, draft, tok = models
    events = []
    generate(target, ids_of(tok), draft_model=draft, max_new_tokens=20, do_sample=False, gamma_method="gammatune",
             gamma0=3, eta=0.5, delta=2, gamma_min=2, gamma_max=6, on_event=events.append)
    header, steps, summary = events[0], events[1:-1], events[-1]
    assert isinstance(header, SessionHeader) and isinstance(summary, SessionSummary)
    assert all(isinstance(s, StepEvent) for s in steps) and steps
    assert header.method == "gammatune" and header.gamma0 == 3
    assert header.params["eta"] == 0.5 and header.params["gamma_max"] == 6
    assert all(2 <= s.gamma <= 6 for s in steps)
    assert summary.tokens == 20


@pytest.mark.parametrize("kw, needle", [
    ({"num_beams": 2}, "num_beams"),
    ({"num_return_sequences": 2, "do_sample": True}, "num_return_sequences"),
    ({"output_attentions": True, "return_dict_in_generate": True}, "output_attentions"),
    ({"guidance_scale": 1.5}, "ClassifierFreeGuidance"),
    ({"gamma_method": "bogus"}, "unknown method"),
    ({"tau": 2}, "tau must be"),
    ({"draft_model": "tiny"}, "draft_model="),
    ({"draft_model": None}, "needs a draft"),
    ({"prompt_lookup_num_tokens": 3}, "draft_model='prompt-lookup'"),
])
def test_what_the_engine_cannot_honour_is_refused_in_one_line(models, kw, needle):
    target, draft, tok = models
    call = {"draft_model": draft, "max_new_tokens": 5, **kw}
    with pytest.raises(InvalidParameter, match=needle):
        target.generate(ids_of(tok), custom_generate=gammatune_generate, **call)


def test_a_batch_or_padding_is_refused(models):
    target, draft, tok = models
    two = torch.cat([ids_of(tok, "abc"), ids_of(tok, "xyz")])
    with pytest.raises(InvalidParameter, match="one sequence at a time"):
        generate(target, two, draft_model=draft, max_new_tokens=4)
    with pytest.raises(InvalidParameter, match="padding"):
        generate(target, two[:1], attention_mask=torch.tensor([[0, 1, 1, 1]]), draft_model=draft, max_new_tokens=4)


# -- sampled: the target's law, with the processors, on the 8-token micro pair ------------------------

N = 500


def test_sampled_output_follows_the_targets_law(micro_pair):
    target, draft, tok = micro_pair.target, micro_pair.draft, micro_pair.tokenizer
    vocab = target.config.vocab_size
    served = Served(SamplingConfig(temperature=0.9, top_k=6))
    p_law = joint_law(target, served, 1.5, vocab)
    q_law = joint_law(draft, served, 1.5, vocab)
    assert (p_law - q_law).abs().sum() > 0.3   # the draft's law differs: the test could fail
    counts: Counter = Counter()
    ids = torch.tensor([PROMPT_IDS])
    for seed in range(N):
        out = target.generate(ids, custom_generate=gammatune_generate, draft_model=draft, text_tokenizer=tok,
                              do_sample=True, temperature=0.9, top_k=6, top_p=1.0, repetition_penalty=1.5,
                              max_new_tokens=2, seed=seed, gamma0=3, gamma_method="specdecode")
        counts[int(out[0, -2]) * vocab + int(out[0, -1])] += 1
    assert chi2_test(counts, p_law, N) > 1e-3
    assert chi2_test(counts, q_law, N) < 1e-6
    assert chi2_test(counts, joint_law(target, served, 1.0, vocab), N) < 1e-6   # the penalty was applied


def test_without_a_seed_torch_manual_seed_reproduces_a_sampled_run(models):
    target, draft, tok = models
    runs = []
    for _ in range(2):
        torch.manual_seed(7)
        runs.append(generate(target, ids_of(tok), draft_model=draft, do_sample=True, max_new_tokens=15))
    assert torch.equal(runs[0], runs[1])


def test_a_model_used_by_gammatune_can_still_be_copied(models):
    """The pair cached on the target holds locks and runners: a deepcopy (a self-draft builder makes one) skips it."""
    import copy

    target, draft, tok = models
    ids = ids_of(tok)
    first = generate(target, ids, draft_model=draft, max_new_tokens=8, do_sample=False)
    twin = copy.deepcopy(target)
    assert torch.equal(generate(twin, ids, draft_model=draft, max_new_tokens=8, do_sample=False), first)


def test_the_users_models_are_freed_with_the_pairs_gammatune_cached_on_them():
    """The pairs live on the target (hf/pairs.py), not in a weak-keyed cache, which its pair would keep alive."""
    import gc
    import weakref

    from tiny_models import make_byte_tokenizer, make_llama, noisy_copy

    tok = make_byte_tokenizer()
    target = make_llama(len(tok), seed=1)
    draft = noisy_copy(target, seed=2, scale=0.1)
    for d in (draft, "self:int8", "prompt-lookup"):
        generate(target, ids_of(tok), draft_model=d, text_tokenizer=tok, max_new_tokens=4, do_sample=False)
    gone = weakref.ref(target), weakref.ref(draft)
    del target, draft
    gc.collect()
    assert [r() is None for r in gone] == [True, True]


@pytest.mark.parametrize("spec", ["self:int8", "self:bf16"])
def test_a_self_draft_is_identical_to_generate(models, spec):
    """Runs where this gammatune builds self-drafts (engine/drafting/self_draft.py, issue 26)."""
    pytest.importorskip("gammatune_tui.engine.drafting.self_draft")
    target, _, tok = models
    ids = ids_of(tok)
    want = target.generate(ids, do_sample=False, max_new_tokens=30, repetition_penalty=1.2)
    events = []
    got = generate(target, ids, draft_model=spec, do_sample=False, max_new_tokens=30, repetition_penalty=1.2,
                   on_event=events.append)
    assert torch.equal(got, want) and events[0].draft == spec
    from gammatune_tui.hf.pairs import pair_for

    pair = pair_for(target, spec, tok)   # the cached pair: the copy's record is the pair's, not the module's
    assert pair.self_draft.name == spec and [k for k in vars(pair.draft) if k.startswith("gammatune_")] == []


@pytest.mark.skipif(not __import__("tiny_mtp").runs_heads(), reason="this transformers' MtpModel runs no head alone")
def test_a_head_drafts_through_generate_as_it_does_on_the_command_line(tmp_path):
    """`generate(target, ids, draft_model="mtp")` (the head in the target's own folder) and `"eagle3:PATH"` (or the
    head's folder itself): generate's tokens, drafted by the head; a head without its folder is one line."""
    from tiny_eagle3 import head_tensors, write_head
    from tiny_models import make_byte_tokenizer, make_llama
    from tiny_mtp import write_mtp_checkpoint

    ids = torch.tensor([[0, 72, 101, 108, 108, 111]])
    target = write_mtp_checkpoint("mellum", tmp_path / "m", seed=3)
    llama = make_llama(260, seed=1, init=1.0)
    head = write_head(tmp_path / "e3", llama, head_tensors(llama, range(0, 260, 3)), "speculators", (0, 1, 2))
    for model, draft in ((target, "mtp"), (llama, f"eagle3:{head}"), (llama, str(head))):
        events: list = []
        got = generate(model, ids, draft_model=draft, do_sample=False, max_new_tokens=20, on_event=events.append,
                       tokenizer=make_byte_tokenizer())
        ref = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=20)
        assert got.tolist() == ref.tolist(), draft
        assert sum(len(e.drafted) for e in events if isinstance(e, StepEvent)) > 0, draft
    with pytest.raises(InvalidParameter, match="'eagle3:PATH'"):
        generate(llama, ids, draft_model="eagle3", max_new_tokens=4, tokenizer=make_byte_tokenizer())
