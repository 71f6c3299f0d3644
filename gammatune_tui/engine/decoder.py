"""SpeculativeDecoder: draft → verify → accept → rewind → event (SPEC §1).

Cache discipline (the part that makes it fast and exact): both models keep a
`DynamicCache` for the whole session. After every step the target's cache
holds exactly the accepted sequence minus its last token (that token has no KV
entry yet and opens the next verification window); the draft's cache holds
the same or one token less (after a fully accepted window the last drafted
token was never fed to the draft; it is fed together with the target's bonus
token at the next step, as transformers does). Rejected tokens are cropped
from both caches before the step's event is emitted; the prefix is never run
again.

The step loop does as little Python as it can: one host sync per drafted
token (the policy must see its probabilities before deciding to go on), one
`.tolist()` per verification, no re-encoding of text.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Iterator, Sequence

import torch
from transformers import DynamicCache

from ..errors import InvalidParameter
from .events import (
    DraftedToken, EmittedToken, SessionHeader, SessionSummary, StepEvent, TargetToken,
)
from .policies import Policy, PolicySettings
from .sampling import SamplingConfig, Served, greedy_accept, make_generator, residual, sample, sampled_accept

_VERSIONS: dict[str, str] | None = None


def versions() -> dict[str, str]:
    """torch / transformers / gammatune versions, looked up once per process."""
    global _VERSIONS
    if _VERSIONS is None:
        import transformers

        from .. import __version__ as own
        _VERSIONS = {"torch": torch.__version__, "transformers": transformers.__version__, "gammatune": own}
    return dict(_VERSIONS)


class TextPieces:
    """Incremental detokenisation whose pieces concatenate to `decode(all ids)` exactly.

    A piece is `decode(ids[:k])[len(previous text):]`. While the decoded text
    ends in U+FFFD (a multi-byte character cut in the middle) the piece is held
    back and handed out with the token that completes the character.
    """

    def __init__(self, tokenizer: Any):
        self._decode = tokenizer.decode
        self.ids: list[int] = []
        self.text = ""

    def push(self, token_id: int) -> str:
        self.ids.append(token_id)
        full = self._decode(self.ids)
        if full.endswith("\ufffd"):
            return ""
        # A tokenizer that rewrites earlier text (clean-up of spaces) cannot take
        # back what was shown; the piece is then the tail beyond the old length.
        piece = full[len(self.text):]
        self.text = full
        return piece

    def flush(self) -> str:
        """The held-back rest (only at the very end of a session)."""
        full = self._decode(self.ids)
        piece = full[len(self.text):]
        self.text = full
        return piece


def prompt_pieces(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Display pieces of the prompt tokens; a small decode window keeps long prompts cheap."""
    out: list[str] = []
    window = 8
    for k in range(len(ids)):
        s = max(0, k - window)
        before = tokenizer.decode(list(ids[s:k])) if k > s else ""
        out.append(tokenizer.decode(list(ids[s:k + 1]))[len(before):])
    return out


# -- forward passes ------------------------------------------------------------------
#
# For small models on a CPU, a forward pass through transformers' wrappers
# (output capturing, generic mask construction, output dataclasses) costs as
# much as the layers themselves. For the plain Llama/Qwen2 stack the decoder
# runs the same modules directly: embeddings, rotary table, the decoder
# layers with an explicit causal mask, the final norm and the LM head on the
# kept positions only. It is used only after a self-check against the
# model's own forward on this very model; anything unusual (other
# architectures, sliding windows, accelerate dispatch, a failed check) takes
# the standard path.

_FAST_ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM")
_FORWARDS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _standard_forward(model: Any):
    def fwd(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        return model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=keep).logits[0]

    return fwd


def _direct_forward(model: Any):
    inner = model.model
    layers = list(inner.layers[: model.config.num_hidden_layers])
    embed, rotary, norm, head = inner.embed_tokens, inner.rotary_emb, inner.norm, model.lm_head
    eager = model.config._attn_implementation == "eager"
    device = next(model.parameters()).device

    def fwd(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        h = embed(ids)
        n = ids.shape[1]
        past = cache.get_seq_length()
        pos = torch.arange(past, past + n, device=device).unsqueeze(0)
        pe = rotary(h, pos)
        mask = None
        if n > 1:
            q = torch.arange(past, past + n, device=device).view(-1, 1)
            k = torch.arange(past + n, device=device).view(1, -1)
            mask = (k <= q).view(1, 1, n, past + n)
            if eager:
                mask = torch.zeros(mask.shape, dtype=h.dtype, device=device).masked_fill(~mask, torch.finfo(h.dtype).min)
        for layer in layers:
            h = layer(h, attention_mask=mask, position_embeddings=pe, position_ids=pos,
                      past_key_values=cache, use_cache=True)
        return head(norm(h[:, -keep:]))[0]

    return fwd


def _direct_eligible(model: Any) -> bool:
    cfg = getattr(model, "config", None)
    inner = getattr(model, "model", None)
    if cfg is None or inner is None or type(model).__name__ not in _FAST_ARCHS:
        return False
    if getattr(model, "hf_device_map", None) or getattr(cfg, "_attn_implementation", None) not in ("sdpa", "eager"):
        return False
    if any(t != "full_attention" for t in (getattr(cfg, "layer_types", None) or [])):
        return False
    if getattr(cfg, "use_sliding_window", False):
        return False
    return all(hasattr(inner, a) for a in ("embed_tokens", "layers", "norm", "rotary_emb")) and hasattr(model, "lm_head")


def make_forward(model: Any):
    """fwd(ids (1, n), cache, keep) -> logits (keep, vocab): the direct path when it checks out."""
    cached = _FORWARDS.get(model)
    if cached is not None:
        return cached
    std = _standard_forward(model)
    chosen = std
    if _direct_eligible(model):
        try:
            fast = _direct_forward(model)
            device = next(model.parameters()).device
            vocab = int(model.config.vocab_size)
            g = torch.Generator().manual_seed(0)
            ids = torch.randint(0, vocab, (1, 7), generator=g).to(device)
            with torch.no_grad():
                c1, c2 = DynamicCache(), DynamicCache()
                a = [std(ids[:, :4], c1, 4), std(ids[:, 4:6], c1, 2), std(ids[:, 6:], c1, 1)]
                b = [fast(ids[:, :4], c2, 4), fast(ids[:, 4:6], c2, 2), fast(ids[:, 6:], c2, 1)]
            tol = 1e-3 if a[0].dtype == torch.float32 else 2e-2
            ok = all(torch.equal(x.argmax(-1), y.argmax(-1)) and torch.allclose(x.float(), y.float(), rtol=tol, atol=tol)
                     for x, y in zip(a, b))
            if ok:
                chosen = fast
        except Exception:  # any surprise: the standard path is always correct
            chosen = std
    chosen = _grad_free(chosen, _inference_mode_safe(model))
    try:
        _FORWARDS[model] = chosen
    except TypeError:  # pragma: no cover - not weak-referenceable
        pass
    return chosen


def _inference_mode_safe(model: Any) -> bool:
    """optimum-quanto's int4 kernels fail under inference_mode; everything else runs faster in it."""
    return not any(type(m).__module__.startswith("optimum.quanto") for m in model.modules())


def _grad_free(fn: Any, inference: bool):
    """Run each forward without autograd (per call, so no grad mode leaks across the generator's yields)."""
    mode = torch.inference_mode if inference else torch.no_grad

    def run(ids: torch.Tensor, cache: DynamicCache, keep: int) -> torch.Tensor:
        with mode():
            return fn(ids, cache, keep)

    run.__qualname__ = f"{fn.__qualname__}[{mode.__name__}]"
    return run


def _eos_ids(pair: Any) -> frozenset[int]:
    ids = getattr(pair, "eos_ids", None)
    if ids is not None:
        return frozenset(ids)
    found: set[int] = set()
    tok_eos = getattr(pair.tokenizer, "eos_token_id", None)
    if isinstance(tok_eos, int):
        found.add(tok_eos)
    gen_eos = getattr(getattr(pair.target, "generation_config", None), "eos_token_id", None)
    if isinstance(gen_eos, int):
        found.add(gen_eos)
    elif isinstance(gen_eos, (list, tuple)):
        found.update(int(i) for i in gen_eos)
    return frozenset(found)


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
    """

    def __init__(
        self,
        pair: Any,
        policy: PolicySettings | Policy | None = None,
        sampling: SamplingConfig | None = None,
        label: str = "",
    ):
        self.pair = pair
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
        self._lock = threading.Lock()
        self._pending: tuple[PolicySettings | None, SamplingConfig | None] | None = None
        self._stop = threading.Event()
        self.eos_ids = _eos_ids(pair)
        self.target_cache: DynamicCache | None = None
        self.draft_cache: DynamicCache | None = None
        self.ids: list[int] = []  # prompt + generated, the accepted sequence
        self.on_step = None  # debug hook: called with the decoder after each step's rewind

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
        with self._lock:
            old = self._pending
            if old is not None:
                settings = settings if settings is not None else old[0]
                sampling = sampling if sampling is not None else old[1]
            self._pending = (settings, sampling)

    def stop(self) -> None:
        """End the running session at the next step boundary (stop_reason "stopped")."""
        self._stop.set()

    def _take_pending(self) -> bool:
        with self._lock:
            pending, self._pending = self._pending, None
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
    def cache_lengths(self) -> tuple[int, int]:
        """(target, draft) cached tokens; for tests and the step inspector."""
        t = self.target_cache.get_seq_length() if self.target_cache is not None else 0
        d = self.draft_cache.get_seq_length() if self.draft_cache is not None else 0
        return t, d

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
        vocab = int(min(self.pair.target.config.vocab_size, self.pair.draft.config.vocab_size))
        bad = [i for i in prompt_ids if not (0 <= i < vocab)]
        if bad:
            raise InvalidParameter(f"prompt token id {bad[0]} is outside the vocabulary (0..{vocab - 1})")
        self._stop.clear()
        return self._run(prompt_ids, max_new_tokens, user_text, turn)

    def _run(self, prompt_ids: list[int], max_new: int, user_text: str | None, turn: int):
        pair = self.pair
        tok = pair.tokenizer
        target, draft = pair.target, pair.draft
        device = torch.device(getattr(pair, "device", None) or target.device)
        self._device = device
        self._take_pending()
        self._served = Served(self.sampling)
        self._gen = make_generator(self.sampling.seed, device)
        tfwd = make_forward(target)
        dfwd = make_forward(draft)
        t_vocab = target.config.vocab_size
        d_vocab = draft.config.vocab_size
        vocab = min(t_vocab, d_vocab)
        t_slice = t_vocab != vocab
        d_slice = d_vocab != vocab

        t0 = time.perf_counter()
        prompt_text = tok.decode(prompt_ids)
        header = SessionHeader(
            target=str(getattr(pair, "name_target", "") or getattr(target.config, "_name_or_path", "")),
            draft=str(getattr(pair, "name_draft", "") or getattr(draft.config, "_name_or_path", "")),
            tokenizer=str(getattr(tok, "name_or_path", "")),
            device=str(device),
            dtype=str(getattr(pair, "dtype", target.dtype)).replace("torch.", ""),
            method=self.policy.name,
            gamma0=self.policy.gamma0,
            params=self.policy.describe(),
            sampling=self.sampling.to_json(),
            max_new_tokens=max_new,
            prompt_ids=list(prompt_ids),
            prompt=prompt_text,
            prompt_pieces=prompt_pieces(tok, prompt_ids),
            seed=self.sampling.seed,
            demo=bool(getattr(pair, "is_demo", False)),
            versions=versions(),
            created=time.time(),
            label=self.label,
            turn=turn,
            user_text=user_text if user_text is not None else "",
        )
        yield header

        ids = list(prompt_ids)
        self.ids = ids
        tcache = DynamicCache()
        dcache = DynamicCache()
        self.target_cache, self.draft_cache = tcache, dcache
        pieces = TextPieces(tok)
        eos = self.eos_ids
        single_cache: dict[int, str] = {}

        def single(tid: int) -> str:
            """One token's own text (for the drafted list), decoded once per id."""
            text = single_cache.get(tid)
            if text is None:
                text = single_cache[tid] = tok.decode([tid])
            return text

        # Stats.
        steps = drafted_total = accepted_total = 0
        target_calls = draft_calls = 0
        draft_time = verify_time = 0.0
        pos_drafted: list[int] = []
        pos_accepted: list[int] = []
        generated = 0
        stop_reason = "max_new_tokens"

        if len(ids) > 1:
            prefix = torch.tensor([ids[:-1]], device=device)
            tfwd(prefix, tcache, 1)
            dfwd(prefix, dcache, 1)

        while True:
            step_start = time.perf_counter()
            if self._stop.is_set():
                stop_reason = "stopped"
                break
            changed = self._take_pending()
            policy = self.policy
            served = self._served
            greedy = served.greedy
            gen = self._gen
            method = policy.name
            params = policy.describe()
            gamma = policy.gamma
            remaining = max_new - generated
            # the target always adds one token, so at most remaining - 1 drafts
            window = min(gamma, remaining - 1)

            # ---- 1. draft ----------------------------------------------------
            n = len(ids)
            d_len = dcache.get_seq_length()
            feed = ids[d_len:]
            d_ids: list[int] = []
            d_top: list[float] = []
            d_chosen: list[float] = []
            q_rows: list[torch.Tensor] = []
            early = False
            td = time.perf_counter()
            if window > 0:
                inp = torch.tensor([feed], device=device)
                while True:
                    logits = dfwd(inp, dcache, 1)[-1]
                    draft_calls += 1
                    if d_slice:
                        logits = logits[:vocab]
                    logits = logits.float()
                    if greedy:
                        probs = torch.softmax(logits, dim=-1)
                        top, x = probs.max(dim=-1)
                        top_p_, chosen_p, xi = torch.stack((top, top, x.to(top.dtype))).tolist()
                        nxt = x.view(1, 1)
                    else:
                        probs = served.probs(logits.unsqueeze(0))
                        x = sample(probs, gen)
                        top_p_, chosen_p, xi = torch.stack((probs.max(), probs[0, x[0]], x[0].to(probs.dtype))).tolist()
                        q_rows.append(probs[0])
                        nxt = x.view(1, 1)
                    xi = int(xi)
                    d_ids.append(xi)
                    d_top.append(top_p_)
                    d_chosen.append(chosen_p)
                    keep = policy.keep_drafting(top_p_, chosen_p)
                    if len(d_ids) >= window or xi in eos:
                        break
                    if not keep:
                        early = True
                        break
                    inp = nxt
            draft_s = time.perf_counter() - td
            d = len(d_ids)

            # ---- 2. verify: one target forward over [last accepted, drafts...] ----
            tv = time.perf_counter()
            t_len = tcache.get_seq_length()
            vin = torch.tensor([ids[t_len:] + d_ids], device=device)
            n_new = vin.shape[1]
            tlogits = tfwd(vin, tcache, d + 1)
            target_calls += 1
            if t_slice:
                tlogits = tlogits[:, :vocab]
            tlogits = tlogits.float()
            # rows 0..d: the target's distribution after ids[:n] + d_ids[:i]
            if greedy:
                tprobs = torch.softmax(tlogits, dim=-1)
                targmax = tlogits.argmax(dim=-1)
                if d:
                    didx = torch.tensor(d_ids, device=device)
                    d_p = tprobs[:d].gather(1, didx.view(-1, 1)).view(-1)
                    pack = torch.cat((targmax.to(tprobs.dtype), d_p)).tolist()
                    t_arg = [int(v) for v in pack[: d + 1]]
                    t_probs = pack[d + 1:]
                else:
                    t_arg = [int(targmax[0])]
                    t_probs = []
                a = greedy_accept(d_ids, t_arg)
                y = t_arg[a]
            else:
                p = served.probs(tlogits)
                if d:
                    didx = torch.tensor(d_ids, device=device)
                    p_ch = p[:d].gather(1, didx.view(-1, 1)).view(-1)
                    q = torch.stack(q_rows)
                    q_ch = q.gather(1, didx.view(-1, 1)).view(-1)
                    a = sampled_accept(p_ch, q_ch, gen)
                    t_probs = p_ch.tolist()
                    law = residual(p[a], q[a]) if a < d else p[d]
                else:
                    a = 0
                    t_probs = []
                    law = p[0]
                y = int(sample(law.unsqueeze(0), gen)[0])
            kind = "correction" if a < d else "bonus"

            # ---- 3. accept, with EOS and the token budget ---------------------
            new = d_ids[:a] + [y]
            cut = len(new)
            for i, tid in enumerate(new):
                if tid in eos:
                    cut = i + 1
                    break
            cut = min(cut, remaining)
            new = new[:cut]
            ended_eos = bool(new) and new[-1] in eos
            has_target = cut == a + 1
            ids.extend(new)
            generated += len(new)
            verify_s = time.perf_counter() - tv

            # ---- 4. rewind: crop both caches to the accepted prefix -----------
            keep_len = len(ids) - 1
            drop_t = (t_len + n_new) - keep_len
            if drop_t > 0:
                tcache.crop(-drop_t)
            d_now = dcache.get_seq_length()
            if d_now > keep_len:
                dcache.crop(-(d_now - keep_len))

            # ---- 5. update the policy -----------------------------------------
            policy.update(accepted=a, drafted=d)

            # ---- 6. report ----------------------------------------------------
            steps += 1
            drafted_total += d
            accepted_total += a
            draft_time += draft_s
            verify_time += verify_s
            while len(pos_drafted) < d:
                pos_drafted.append(0)
                pos_accepted.append(0)
            for i in range(d):
                pos_drafted[i] += 1
                if i < a:
                    pos_accepted[i] += 1
            finished = ended_eos or generated >= max_new
            texts = [pieces.push(t) for t in new]
            if finished and texts:
                texts[-1] += pieces.flush()
            emitted = [
                EmittedToken(tid, txt, "draft" if i < a else "target")
                for i, (tid, txt) in enumerate(zip(new, texts))
            ]
            drafted_ev = [
                DraftedToken(d_ids[i], single(d_ids[i]), d_top[i], d_chosen[i], t_probs[i])
                for i in range(d)
            ]
            target_ev = TargetToken(y, texts[a], kind) if has_target else None
            now = time.perf_counter()
            if self.on_step is not None:
                self.on_step(self)
            yield StepEvent(
                step=steps - 1, method=method, params=params, gamma=gamma, drafted=drafted_ev,
                accepted=a, target_token=target_ev, emitted=emitted, gamma_next=policy.gamma,
                draft_s=draft_s, verify_s=verify_s, step_s=now - step_start, elapsed_s=now - t0,
                early_stop=early, settings_changed=changed,
            )
            if ended_eos:
                stop_reason = "eos"
                break
            if generated >= max_new:
                stop_reason = "max_new_tokens"
                break

        wall = time.perf_counter() - t0
        gen_ids = ids[len(prompt_ids):]
        yield SessionSummary(
            tokens=generated, steps=steps,
            acceptance_rate=(accepted_total / drafted_total) if drafted_total else 0.0,
            tokens_per_step=(generated / steps) if steps else 0.0,
            tokens_per_s=(generated / wall) if wall > 0 else 0.0,
            stop_reason=stop_reason, drafted=drafted_total, accepted=accepted_total,
            target_calls=target_calls, draft_calls=draft_calls, wall_s=wall,
            draft_s=draft_time, verify_s=verify_time,
            per_position=[pos_accepted[i] / pos_drafted[i] for i in range(len(pos_drafted))],
            text=tok.decode(gen_ids),
        )


__all__ = ["SpeculativeDecoder", "TextPieces", "prompt_pieces", "versions"]
