"""`--draft gemma4-assistant:PATH`: the Gemma 4 assistant drafts over the target's keys and values
(engine/drafting/gemma4_assistant.py, read through runners/hidden.py `TargetReads.kv`).

What a user would notice: greedy output is `generate`'s at every γ; an assistant trained for seconds on the target's
text is accepted; its drafts are transformers' own `SinglePositionMultiTokenCandidateGenerator`'s from the same text
(the wiring check: a wrong row, keys or position changes a random head's drafts); sampled output follows the target's law, where
transformers' path (argmax drafts checked against the raw logits) does not; an assistant for another target is
one line before anything loads.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections import Counter

import pytest
import torch

from gammatune_tui.bench.sim.head_trace import record_head_trace
from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
from gammatune_tui.engine.common.logits_check import logits_tolerance
from gammatune_tui.engine.common.pair import ModelPair
from gammatune_tui.engine.common.sampling import Served
from gammatune_tui.engine.drafting import gemma4_assistant as g4
from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
from gammatune_tui.errors import InvalidParameter
from head_law import two_token_counts
from test_sampling import N_SAMPLES, chi2_test, joint_law
from tiny_gemma4 import make_gemma4, train_assistant, write_assistant
from tiny_models import make_byte_tokenizer, make_llama

PROMPT = [0, 72, 101, 108, 108, 111, 44, 32, 72, 101]
TRAIN = [PROMPT, [0, 84, 104, 101, 32], [0, 65, 66, 67], [0, 100, 111, 103, 115]]


def _pair(target, eos=frozenset({1})) -> ModelPair:
    return ModelPair(target=target, draft=None, tokenizer=make_byte_tokenizer(), device=torch.device("cpu"),
                     dtype=torch.float32, eos_ids=eos, name_target="t", name_draft="gemma4-assistant")


def _steps(pair, root, gamma: int, n: int = 30, prompt=PROMPT, cfg=SamplingConfig()) -> list[StepEvent]:
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", gamma), cfg,
                             drafter=DrafterSettings("gemma4-assistant", assistant_head=str(root)))
    return [e for e in dec.generate(prompt, max_new_tokens=n) if isinstance(e, StepEvent)]


def _generate(target, prompt, n: int, **kw) -> list[int]:
    x = torch.tensor([prompt])
    return target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n,
                           **kw)[0, len(prompt):].tolist()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny Gemma 4 target (its last layer reusing the keys of the one before, as E2B's do), an assistant trained
    for seconds on its outputs, and a random one with an ordered-embeddings (centroid) head."""
    target = make_gemma4()
    trained = train_assistant(target, write_assistant(tmp_path_factory.mktemp("trained"), target), TRAIN)
    centroids = write_assistant(tmp_path_factory.mktemp("centroids"), target, seed=3, centroids=4)
    return target, trained, centroids


def test_greedy_is_generates_and_the_trained_assistant_is_accepted(tiny):
    target, trained, centroids = tiny
    pair = _pair(target)
    ref = _generate(target, [0, 87, 104, 121], 30)   # a prompt the assistant was not trained on
    for root in (trained, centroids):
        for gamma in (1, 3, 5):
            steps = _steps(pair, root, gamma, prompt=[0, 87, 104, 121])
            assert [t.id for e in steps for t in e.emitted] == ref
            assert max(len(e.drafted) for e in steps) == gamma
    steps = _steps(pair, trained, 3, prompt=PROMPT)
    assert sum(e.accepted for e in steps) >= 0.6 * sum(len(e.drafted) for e in steps)


def test_the_pre_norm_row_drops_the_trained_assistants_acceptance(tiny, monkeypatch):
    """Fed the target's last row before the final norm instead of after (the LightLLM PR #1402 pitfall), the
    trained assistant is accepted visibly less, though the output stays exact. It does not collapse: this tiny
    assistant predicts mostly from the target's keys (a zero row leaves it near its own rate), so the pre-norm row
    hurts as a large wrong input (docs/heads-eagle-dflash.md)."""
    from gammatune_tui.engine.runners.hidden import TargetReads

    target, trained, _ = tiny
    pair = _pair(target)

    def rate() -> float:
        steps = [e for prompt in TRAIN for e in _steps(pair, trained, 3, prompt=prompt)]
        return sum(e.accepted for e in steps) / sum(len(e.drafted) for e in steps)

    right = rate()
    made = g4.Gemma4AssistantSource.__init__

    def pre_norm(self, t, m):
        made(self, t, m)
        self.reads = TargetReads(last=True, kv=self.reads.kv)

    monkeypatch.setattr(g4.Gemma4AssistantSource, "__init__", pre_norm)
    pre = rate()
    assert right > 0.7 and pre < right - 0.1, (right, pre)   # measured 0.84 and 0.63


def _transformers_rounds(target, root, gamma: int, n: int, fixed: bool) -> tuple[list[int], dict[int, tuple]]:
    """transformers' greedy output with the assistant, and by context length its drafts and each draft's
    probability under the assistant's law. `fixed`: the target's keys cut to the accepted positions first
    (transformers keeps the rejected draft's own entry after a partial rejection; gemma4_assistant.py says why
    gammatune does not)."""
    from transformers import AutoModelForCausalLM
    from transformers.generation import candidate_generator as cg

    assistant = AutoModelForCausalLM.from_pretrained(str(root)).eval()
    assistant.generation_config.num_assistant_tokens = gamma
    rounds: dict[int, tuple] = {}
    real = cg.SinglePositionMultiTokenCandidateGenerator.get_candidates

    def spy(self, input_ids, model_kwargs, model_outputs, is_first_iteration, n_last_matches, **kw):
        if fixed and model_outputs is not None:
            end = input_ids.shape[1] - 1
            model_outputs.shared_kv_states = {k: (a[:, :, :end], b[:, :, :end])
                                              for k, (a, b) in model_outputs.shared_kv_states.items()}
        ids, logits = real(self, input_ids, model_kwargs, model_outputs, is_first_iteration, n_last_matches, **kw)
        if logits is not None:   # fewer drafts at the length limit
            drafted = ids[0, input_ids.shape[1]:]
            probs = logits[0].float().softmax(-1).gather(-1, drafted[:, None])[:, 0]
            rounds[input_ids.shape[1]] = (drafted.tolist(), probs)
        return ids, logits

    cg.SinglePositionMultiTokenCandidateGenerator.get_candidates = spy
    try:
        out = _generate(target, PROMPT, n, assistant_model=assistant)
    finally:
        cg.SinglePositionMultiTokenCandidateGenerator.get_candidates = real
    return out, rounds


def test_the_drafts_are_transformers_assistant_generators(tiny):
    """From every text transformers drafts from, gammatune's source drafts the same γ tokens with the same
    probabilities (its head trace: the source fed one teacher-forced pass's rows and keys, as bench --simulate
    records it), once transformers' keys are the accepted positions'. Unfixed, transformers' laws after a
    partial rejection read the rejected token's key (after the prefill they agree)."""
    from transformers.generation import candidate_generator as cg

    target = tiny[0]
    gamma, n = 3, 30   # context under the sliding window (64): transformers' sliding keys stay position-aligned
    tol = logits_tolerance(torch.float32)
    for root in tiny[1:]:
        out, rounds = _transformers_rounds(target, root, gamma, n, fixed=True)
        assert out == _generate(target, PROMPT, n)
        trace = record_head_trace(_pair(target, eos=frozenset()), "gemma4-assistant", {"assistant_head": str(root)},
                                  "p", PROMPT, n, gamma, [], tokens=out)
        assert len(rounds) >= 8
        first = min(rounds)
        _, stale = _transformers_rounds(target, root, gamma, n, fixed=False)
        assert torch.equal(stale[first][1], rounds[first][1])
        assert any(not torch.allclose(stale[k][1], rounds[k][1], rtol=tol, atol=tol) for k in rounds if k in stale)
        if "is_main_model_prefill" not in inspect.getsource(cg.SinglePositionMultiTokenCandidateGenerator):
            del rounds[min(rounds)]   # transformers before 5.2x drafted its first round from the prompt's first row
        for length, (drafted, probs) in rounds.items():
            at = length - len(PROMPT)
            assert trace.proposals[at][:len(drafted)] == drafted
            torch.testing.assert_close(torch.tensor(trace.chosen[at][:len(drafted)]), probs, rtol=tol, atol=tol)


def test_sampled_output_follows_the_targets_law(tmp_path):
    target = make_gemma4(11, init=0.6, vocab=8)
    root = write_assistant(tmp_path / "a", target, init=1.0)
    pair = dataclasses.replace(_pair(target), eos_ids=frozenset({-1}))
    cfg = SamplingConfig(temperature=1.0)
    counts, accepted, rejected = two_token_counts(
        pair, DrafterSettings("gemma4-assistant", assistant_head=str(root)), cfg, 8)
    assert accepted > 0 and rejected > 0   # both the accept and the residual paths ran
    assert chi2_test(counts, joint_law(target, Served(cfg), 8), N_SAMPLES) > 1e-3


def test_transformers_argmax_drafts_checked_against_raw_logits_are_not_the_targets_law():
    """transformers' assistant path at T > 0: the candidate is q's argmax, but `_speculative_sampling` accepts it
    with min(1, p/q) as if it were drawn from q, so the first token's law is not p. Drawing it from q (what
    gammatune does) gives p."""
    from transformers.generation.utils import _speculative_sampling

    torch.manual_seed(0)
    p_logits, q_logits = torch.randn(1, 2, 8), torch.randn(1, 1, 8) * 2
    p = p_logits[0, 0].softmax(-1)
    n = 4000
    # transformers 5.17 takes `is_done_candidate` too (False: the candidate is no EOS)
    done = {"is_done_candidate": False} if "is_done_candidate" in inspect.signature(_speculative_sampling).parameters \
        else {}
    for drawn in (False, True):
        counts: Counter = Counter()
        for _ in range(n):
            x = torch.multinomial(q_logits[0, 0].softmax(-1), 1) if drawn else q_logits[0, 0].argmax().view(1)
            tokens, _ = _speculative_sampling(torch.cat([torch.tensor([5]), x])[None], q_logits, 1, p_logits,
                                              **done)
            counts[int(tokens[0, 0])] += 1
        pvalue = chi2_test(counts, p, n)
        assert (pvalue > 1e-3) if drawn else (pvalue < 1e-6)


def test_an_assistant_for_another_target_is_one_line(tmp_path, tiny):
    target = tiny[0]
    wide = write_assistant(tmp_path / "wide", target, backbone_hidden_size=128)
    bare = tmp_path / "bare"
    bare.mkdir()
    llama = make_llama(260, seed=2)
    for folder, cfg, words in ((wide, target.config, "trained on a target 128 wide, this one is 64"),
                               (bare, target.config, "no config.json there"),
                               (tiny[1], llama.config, "it drafts for a Gemma 4 target")):
        with pytest.raises(InvalidParameter, match=re.escape(words)):
            g4.check_assistant(str(folder), cfg)
    (wide / "model.safetensors").unlink()
    with pytest.raises(InvalidParameter, match="no model.safetensors there"):
        g4.read_config(str(wide))


def test_the_doctors_parts_are_the_assistants_own_forward(tiny):
    """`doctor` times the assistant's step in parts (its layers; its centroid scoring and gather, or its plain LM
    head): run one after another they give the forward's own law and projected state, so the parts timed are the
    step that drafts, not a look-alike."""
    from gammatune_tui.engine.runners.eager import EagerRunner
    from gammatune_tui.engine.runners.hidden import TargetRows

    target = tiny[0]
    served = Served(SamplingConfig())
    for root, names in ((tiny[1], ["its 2 layers", "its LM head over 260 tokens"]),
                        (tiny[2], ["its 2 layers", "its scoring of 4 centroids",
                                   "its gather over the top 1 centroids' 65 tokens (of 260)"])):
        source = g4.Gemma4AssistantSource(target, g4.assistant_of(target, str(root)))
        runner = EagerRunner(target)
        runner.read_target(source.reads)
        runner.start(64)
        with torch.inference_mode():
            runner.prefill(torch.tensor([PROMPT[:-1]]))
        assert runner.hidden is not None
        source.observe(TargetRows(0, runner.hidden, tuple(runner.kv(layer) for layer in source.reads.kv)))
        parts = source.step_parts(PROMPT, served)
        assert list(parts) == names
        outs = [run() for run in parts.values()]
        with torch.inference_mode():
            logits, state = source._step(PROMPT[-1], source.row)
        torch.testing.assert_close(outs[0][0, -1], state)
        torch.testing.assert_close(outs[-1], torch.softmax(logits, -1))


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch has no oneDNN")
def test_a_target_verifying_through_packed_weights_drafts_and_speaks_as_before(tiny, monkeypatch):
    """The packed float32 verify (engine/common/packed_linear.py) is what makes gammatune faster than
    transformers at the same γ on a CPU (docs/benchmarks-heads.md): the assistant, reading the packed target's
    rows and keys, must draft the same tokens and the answer stay generate's."""
    import copy

    from gammatune_tui.engine.common.packed_linear import pack_for_verify

    target, trained, _ = tiny
    monkeypatch.setenv("GAMMATUNE_PACKED_VERIFY", "1")
    packed = copy.deepcopy(target)
    assert pack_for_verify(packed, torch.device("cpu"), torch.float32) is not None
    prompt = [0, 87, 104, 121]
    plain, mine = _steps(_pair(target), trained, 3, prompt=prompt), _steps(_pair(packed), trained, 3, prompt=prompt)
    assert [t.id for e in mine for t in e.emitted] == _generate(target, prompt, 30)
    assert [[t.id for t in e.drafted] for e in mine] == [[t.id for t in e.drafted] for e in plain]
