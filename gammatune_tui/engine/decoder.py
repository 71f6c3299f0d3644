"""SpeculativeDecoder: draft → verify → accept → rewind → event (docs/spec.md §1).

This module is the step loop and the thread-safe controls around it; each
phase lives in its own module (drafting, verification, kv_cache,
step_events), the forward passes and caches in the runners (eager,
static, graphs: the loop cannot tell which it drives), and who proposes the
drafts in a draft source (the draft model or one without, draft_sources.py:
nor can it tell which of those). The loop does as
little Python as it can: one device→host read per step for policies that
never stop early (the window comes back with the verdict), one per drafted
token for those that may (drafting/), no re-encoding of text; the step's
draft and verify times come from `StepClock` (CUDA events on a GPU), so
timing adds no sync.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator, Sequence

import torch

from .common.pair import ModelPair
from ..errors import InvalidParameter
from .context import check_context
from .common.names import MODEL_FREE
from .drafting.draft_sources import DrafterSettings, make_source, pair_drafter
from .drafting import DraftSource, SourceContext
from .events import Event, SessionHeader, SessionSummary, StepEvent, StopReason
from .kv_cache import prefill, rewind
from .logits_processing import check_processors, session_processors, wrap_runner
from .mailbox import SettingsMailbox
from .policies import Policy, PolicySettings
from .runners import Runner, RunnerSet, TargetReads, TargetRows, runner_pool
from .common.sampling import SamplingConfig, Served, make_generator
from .common.vocab import shared_vocab
from .step_clock import StepClock
from .events.step_events import session_header, token_events
from .policies.step_rule import plan_window, settle_step
from .events.tally import SessionTally
from .events.text_pieces import SingleTokenText, TextPieces, answer_text
from .verification import verify_window


def _kept_rows(runner: Runner, start: int, n: int, reads: TargetReads) -> TargetRows:
    """The first n rows of the runner's last pass, which began at position `start`, and the keys and values of the
    layers `reads.kv` names as the runner's cache holds them after the rewind (runners/hidden.py)."""
    rows = runner.hidden
    assert rows is not None, "a runner asked to read_target keeps the rows of every pass"
    return TargetRows(start, rows[:n], tuple(runner.kv(layer) for layer in reads.kv))


def _settings_of(policy: Policy) -> PolicySettings:
    return PolicySettings(policy.name, policy.gamma0, policy.params)


class SpeculativeDecoder:
    """Exact speculative decoding with a swappable γ policy, as a stream of events.

    `generate()` is a generator: it yields a SessionHeader, one StepEvent per
    speculative step and a SessionSummary. `request()` and `stop()` may be
    called from any thread; they take effect at the next step boundary.

    The policy lives as long as the decoder: a second `generate()` (the next
    chat turn) starts from the γ the policy has learned so far. Use a new
    decoder, or `request()` other settings, to start from γ0 again.

    `drafter` picks the draft source (a name of engine/common/names.py `SOURCES` or a
    `DrafterSettings`); by default the one the pair was loaded for
    (`load_pair(drafter=...)`), i.e. the draft model when it has one. A
    self-draft (`self:int4`) is a draft model, not a source: this decoder runs
    the pair it is given, so a self-draft must already be that pair's draft
    (`with_draft` gives the sibling pair that holds it; the public API's
    `gammatune_tui.engine.SpeculativeDecoder` asks for it before this one runs).

    `logits_processor` (transformers processors, e.g. a `LogitsProcessorList`)
    is applied to both models at every position before the served
    distributions, as assisted generation does (logits_processing.py); the
    SamplingConfig's `repetition_penalty` joins it. `target_rows`, a dict,
    collects the target's raw logits by position (`output_logits` in hf/custom_generate.py).
    """

    def __init__(
        self,
        pair: ModelPair,
        policy: PolicySettings | Policy | None = None,
        sampling: SamplingConfig | None = None,
        label: str = "",
        drafter: DrafterSettings | str | None = None,
        *,
        logits_processor: Any = None,
    ):
        self.logits_processor = list(logits_processor or [])
        check_processors(self.logits_processor)
        self.target_rows: dict | None = None
        self.drafter = pair_drafter(pair) if drafter is None else DrafterSettings.of(drafter)
        if self.drafter.self_draft:   # a self-draft is a draft model: the pair's own, or asked for before this
            if pair.self_draft is None or pair.self_draft.name != self.drafter.name:
                raise InvalidParameter(f"{self.drafter.name} is a draft model this pair does not hold: make the "
                                       "decoder on the pair that does (gammatune_tui.engine.with_draft(pair, "
                                       f"{self.drafter.name!r}))")
            self.drafter = DrafterSettings()
        self.pair = pair
        if self.drafter.loads_draft and pair.draft is None:
            raise InvalidParameter("this pair has no draft model (it was loaded for a drafter that needs none); "
                                   f"draft with {' or '.join(repr(n) for n in MODEL_FREE)} or load a draft model")
        if policy is None:
            policy = PolicySettings()
        if isinstance(policy, PolicySettings):
            self._settings = policy
            self.policy: Policy = policy.make()
        elif isinstance(policy, Policy):
            self.policy = policy
            self._settings = _settings_of(policy)
        else:
            raise InvalidParameter(f"policy must be PolicySettings or a Policy, got {type(policy).__name__}")
        self.sampling = sampling or SamplingConfig()
        self.label = label
        self._mailbox = SettingsMailbox()
        self._stop = threading.Event()
        self.eos_ids = frozenset(pair.eos_ids)
        self.runners: RunnerSet | None = None  # the running (or last) session's runners: tests, inspector
        self.source: DraftSource | None = None  # the running (or last) session's draft source
        self.ids: list[int] = []  # prompt + generated, the accepted sequence

    # -- control (any thread) ---------------------------------------------------------
    @property
    def settings(self) -> PolicySettings:
        return self._settings

    def request(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Ask for new policy settings and/or sampling; applied at the next step boundary."""
        if settings is not None and not isinstance(settings, PolicySettings):
            raise InvalidParameter("settings must be a PolicySettings")
        if sampling is not None and not isinstance(sampling, SamplingConfig):
            raise InvalidParameter("sampling must be a SamplingConfig")
        self._mailbox.put(settings, sampling)

    def stop(self) -> None:
        """End the running session at the next step boundary (stop_reason "stopped")."""
        self._stop.set()

    def _take_pending(self) -> bool:
        pending = self._mailbox.take()
        if pending is None:
            return False
        settings, sampling = pending
        changed = False
        if settings is not None:
            self.policy = settings.apply_to(self.policy)
            self._settings = settings
            changed = True
        if sampling is not None:
            if sampling.seed != self.sampling.seed:
                self._gen = make_generator(sampling.seed, self._device)
            self.sampling = sampling
            self._served = Served(sampling)
            changed = True
        return changed

    # -- helpers -------------------------------------------------------------------
    def _encode(self, prompt: Any) -> list[int]:
        if isinstance(prompt, str):
            return list(self.pair.encode_prompt(prompt, raw=True))
        if isinstance(prompt, (list, tuple)):
            if all(isinstance(m, dict) for m in prompt) and prompt:
                return list(self.pair.encode_prompt(list(prompt)))
            if all(isinstance(i, int) and not isinstance(i, bool) for i in prompt):
                return list(prompt)
        if isinstance(prompt, torch.Tensor):
            return [int(i) for i in prompt.reshape(-1).tolist()]
        raise InvalidParameter("prompt must be text, a list of token ids or a list of chat messages")

    # -- the session ---------------------------------------------------------------
    def generate(
        self,
        prompt: str | Sequence[int] | Sequence[dict],
        max_new_tokens: int = 128,
        *,
        user_text: str | None = None,
        turn: int = 0,
    ) -> Iterator[SessionHeader | StepEvent | SessionSummary]:
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InvalidParameter(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
        prompt_ids = self._encode(prompt)
        if not prompt_ids:
            raise InvalidParameter("the prompt is empty (it encodes to no tokens)")
        vocab = self._vocab()
        bad = [i for i in prompt_ids if not (0 <= i < vocab)]
        if bad:
            raise InvalidParameter(f"prompt token id {bad[0]} is outside the vocabulary (0..{vocab - 1})")
        check_context(self.pair, len(prompt_ids), max_new_tokens)   # before any model work: ContextTooLong
        self._stop.clear()
        return self._run(prompt_ids, max_new_tokens, user_text, turn)

    def _vocab(self) -> int:
        """The ids both models speak (the target's alone when no draft model drafts)."""
        return shared_vocab(self.pair.target, self.pair.draft if self.drafter.loads_draft else None)

    def _run(self, prompt_ids: list[int], max_new: int, user_text: str | None, turn: int) -> Iterator[Event]:
        pair = self.pair
        device = torch.device(pair.device)
        self._device = device
        self._take_pending()
        self._served = Served(self.sampling)
        self._gen = make_generator(self.sampling.seed, device)
        pool = runner_pool(pair)
        runners = pool.acquire()
        try:
            yield from self._session(runners, pool.engine, prompt_ids, max_new, user_text, turn, device)
        finally:
            runners.target.read_target(None)   # pooled: the next session (perhaps another source's) reads nothing
            pool.release(runners)

    def _session(self, runners: RunnerSet, engine: str, prompt_ids: list[int], max_new: int,
                 user_text: str | None, turn: int, device: torch.device) -> Iterator[Event]:
        pair = self.pair
        tok = pair.tokenizer
        target = pair.target
        procs = session_processors(self.sampling, self.logits_processor)   # [] by default: runners unwrapped
        trun = wrap_runner(runners.target, procs, self.target_rows)
        # a pair whose vocabularies differ in padding only: both speak the shared part
        vocab = self._vocab()
        t_cut = vocab if target.config.vocab_size != vocab else None
        d_cut = None
        if self.drafter.loads_draft:
            assert pair.draft is not None, "a source that loads the draft model has one"
            d_cut = vocab if pair.draft.config.vocab_size != vocab else None
        source = make_source(self.drafter, SourceContext(pair, wrap_runner(runners.draft, procs), d_cut, self.source))
        drun = source.runner  # None for a model-free source: no draft cache at all
        reads = source.reads   # a head reads the target's hidden rows: the target runner keeps them (runners/hidden.py)
        runners.target.read_target(reads)

        t0 = time.perf_counter()
        yield session_header(pair, self.policy, self.sampling, device, max_new, prompt_ids,
                             label=self.label, turn=turn, user_text=user_text, engine=engine,
                             runner=runners.label if drun is not None else trun.kind,
                             warmup_s=float(pair.warmup_s or 0.0), drafter=self.drafter)

        ids = list(prompt_ids)
        self.ids = ids
        # everything a session caches fits in prompt + max_new tokens (drafts never pass the budget);
        # γ_max tells a graphs runner which windows to capture now, before the answer streams
        gamma_max = self.policy.params.gamma_max
        for runner in (trun, drun):
            if runner is not None:
                runner.start(len(ids) + max_new, gamma_max)
        self.runners = runners
        self.source = source
        eos = self.eos_ids
        pieces = TextPieces(tok, hidden=eos)   # the turn's end is an id in the events, never text
        single = SingleTokenText(tok, hidden=eos)
        tally = SessionTally()
        clock = StepClock(device)
        generated = 0
        stop_reason: StopReason = "max_new_tokens"
        prefill(trun, drun, ids, device)
        # a per-token hybrid (hybrid_probe.py) runs the prompt in the first verify pass, as `generate` does:
        # its rows come with that pass, and until then the source drafts nothing
        prompt_rows_due = reads is not None and len(ids) > 1 and runners.target.hidden is None
        if reads is not None and len(ids) > 1 and not prompt_rows_due:
            source.observe(_kept_rows(runners.target, 0, len(ids) - 1, reads))
        source.start(ids)

        while True:
            step_start = time.perf_counter()
            if self._stop.is_set():
                stop_reason = "stopped"
                break
            changed = self._take_pending()
            policy = self.policy
            served = self._served
            gen = self._gen
            method = policy.name
            params = policy.describe()
            gamma = policy.gamma
            window = plan_window(gamma, max_new - generated)   # never past the budget (step_rule.py)

            # ---- 1. draft (a whole window stays on the device until the verdict's read) ----
            clock.start()
            drafted = source.draft(ids, window, policy=policy, served=served, gen=gen, eos=eos, device=device)
            clock.drafted()

            # ---- 2. verify: one target forward over [last accepted, drafts...], one read ----
            verdict = verify_window(trun, ids, drafted, served=served, gen=gen, vocab_cut=t_cut,
                                    device=device, eos=eos, clock=clock)
            draft_s, verify_s = clock.spans()
            d = len(drafted.ids)
            a = verdict.accepted
            stats = drafted.stats()

            # ---- 3. accept, with EOS and the token budget; the policy learns (step_rule.py) ----
            settled = settle_step(policy, window=window, drafted=d, accepted=a, stats=stats,
                                  run=drafted.ids[:a] + [verdict.token], eos=eos, generated=generated,
                                  max_new=max_new, costs=(draft_s, d, verify_s, verdict.verified))
            new = settled.emitted
            ids.extend(new)
            generated += len(new)

            # ---- 4. rewind both caches to the accepted prefix -----------------
            rewind(trun, drun, len(ids) - 1)
            if reads is not None:   # the rows of the positions the verify ran and the sequence kept
                # (from position 0 when this pass ran the prompt too)
                first = 0 if prompt_rows_due else len(ids) - 1 - len(new)
                source.observe(_kept_rows(runners.target, first, len(ids) - 1 - first, reads))
                prompt_rows_due = False

            # ---- 5. report ----------------------------------------------------
            tally.add_step(d, a, drafted.calls, draft_s, verify_s)
            emitted, drafted_ev, target_ev = token_events(
                new, drafted.ids, stats, verdict.target_probs, a, verdict.kind(d),
                pieces=pieces, single=single, finished=settled.stop is not None,
                point_mass=drafted.point_mass,
            )
            now = time.perf_counter()
            yield StepEvent(
                step=tally.steps - 1, method=method, params=params, gamma=gamma, drafted=drafted_ev,
                accepted=a, target_token=target_ev, emitted=emitted, gamma_next=policy.gamma,
                draft_s=draft_s, verify_s=verify_s, step_s=now - step_start, elapsed_s=now - t0,
                early_stop=drafted.early, settings_changed=changed,
                sampling=self.sampling.to_json() if changed else {},
            )
            if settled.stop is not None:
                stop_reason = settled.stop
                break

        wall = time.perf_counter() - t0
        yield tally.summary(generated, wall, stop_reason, answer_text(tok, ids[len(prompt_ids):], eos),
                            drafter=self.drafter.name)


__all__ = ["SpeculativeDecoder"]
