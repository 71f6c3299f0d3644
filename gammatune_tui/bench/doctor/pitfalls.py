"""`doctor --check-command "…"`: the speculative-decoding pitfalls of 2026 a pasted server command walks into.

Users report the same few mistakes across the vLLM, SGLang, llama.cpp and
Ollama trackers; most are visible in the command line itself, before any
model loads. Each rule here reads the parsed command (and, where a rule
needs it, the model folder it names or the installed package versions) and
answers in one line that says what happens and where it was reported.
Nothing here runs a model: `doctor --for` and `--server-log` measure what a
command line cannot show (the best K, the acceptance).

The engines' flags are the ones bench/deploy/engines.py prints, from the
sources cited there; the renamed llama.cpp flags are its old `--draft-*`
spellings, which llama-server now refuses.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...errors import InvalidParameter


@dataclass(frozen=True)
class Command:
    """A pasted server command: its engine, its flags (last value wins) and the model path it serves."""

    engine: str                 # "llama.cpp", "vllm" or "sglang"
    flags: dict[str, str]       # flag → value ("" for a switch)
    model: str                  # the served model's path or hub id ("" if not given)

    def k(self) -> int | None:
        """The window the command asks for, as its engine names it."""
        raw = {"llama.cpp": self.flags.get("--spec-draft-n-max") or self.flags.get("--draft-max"),
               "sglang": self.flags.get("--speculative-num-steps"),
               "vllm": str(self.spec_config().get("num_speculative_tokens", "") or "")}[self.engine]
        return int(raw) if raw and raw.isdigit() else None

    def spec_config(self) -> dict:
        """vLLM's --speculative-config JSON ({} when absent); one line when it is not JSON."""
        text = self.flags.get("--speculative-config", "")
        if not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError as e:
            raise InvalidParameter(f"--check-command: vLLM's --speculative-config is not JSON ({e})") from None
        if not isinstance(value, dict):
            raise InvalidParameter("--check-command: vLLM's --speculative-config must be a JSON object")
        return value

    def speculates(self) -> bool:
        if self.engine == "llama.cpp":
            spec = self.flags.get("--spec-type", "")
            return bool(self.flags.get("-md") or self.flags.get("--model-draft") or (spec and spec != "none")
                        or "--draft-max" in self.flags)
        if self.engine == "sglang":
            return "--speculative-algorithm" in self.flags
        return bool(self.spec_config())

    def method(self) -> str:
        """The speculation method as the engine names it, lower-cased ("" for a draft model in llama.cpp)."""
        if self.engine == "vllm":
            return str(self.spec_config().get("method", "")).lower()
        if self.engine == "sglang":
            return self.flags.get("--speculative-algorithm", "").lower()
        return self.flags.get("--spec-type", "").lower()


def parse_command(text: str) -> Command:
    """The pasted command, or one line saying why it cannot be read."""
    if not text or not text.strip():
        raise InvalidParameter("--check-command needs a command line, e.g. \"llama-server -m t.gguf -md d.gguf\"")
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise InvalidParameter(f"--check-command: cannot split it into words ({e})") from None
    joined = " ".join(words[:4])
    if any(Path(w).name.startswith(("llama-server", "llama-cli", "llama-speculative")) for w in words[:2]):
        engine, rest = "llama.cpp", words[1:]
    elif "sglang.launch_server" in joined or words[:2] == ["sglang", "serve"]:
        engine, rest = "sglang", words[words.index("sglang.launch_server") + 1:] if "sglang.launch_server" in words \
            else words[2:]
    elif words[:2] == ["vllm", "serve"] or "vllm.entrypoints" in joined:
        engine, rest = "vllm", words[2:] if words[:2] == ["vllm", "serve"] else words[3:]
    else:
        raise InvalidParameter("--check-command: not a llama-server, `vllm serve` or SGLang launch_server command")
    flags: dict[str, str] = {}
    model = ""
    i = 0
    while i < len(rest):
        w = rest[i]
        if w.startswith("-"):
            name, eq, value = w.partition("=")
            if not eq and i + 1 < len(rest) and not rest[i + 1].startswith("-"):
                value, i = rest[i + 1], i + 1
            flags[name] = value
        elif not model:
            model = w   # vllm serve MODEL
        i += 1
    model = model or flags.get("-m", "") or flags.get("--model", "") or flags.get("--model-path", "")
    return Command(engine, flags, model)


# llama.cpp's old draft flags and the names llama-server takes now (tools/server/README.md at commit 00dc805)
RENAMED = {"--draft-max": "--spec-draft-n-max", "--draft": "--spec-draft-n-max", "--draft-n": "--spec-draft-n-max",
           "--draft-min": "--spec-draft-n-min", "--draft-n-min": "--spec-draft-n-min",
           "--draft-p-min": "--spec-draft-p-min"}
LONG_CONTEXT = 32768
CONTEXT_FLAGS = ("--max-model-len", "-c", "--ctx-size", "--context-length")


def _renamed(c: Command) -> str | None:
    old = [f for f in c.flags if f in RENAMED] if c.engine == "llama.cpp" else []
    if not old:
        return None
    return (f"{old[0]} was renamed {RENAMED[old[0]]}; llama-server now refuses the old name and does not start "
            "(llama.cpp common/arg.cpp)")


def _p_min(c: Command) -> str | None:
    if c.engine != "llama.cpp" or not c.speculates():
        return None
    value = c.flags.get("--spec-draft-p-min", c.flags.get("--draft-p-min", "0"))
    try:
        zero = float(value or 0) == 0.0
    except ValueError:
        return None
    return ("--spec-draft-p-min is 0.00 (its default now; it was 0.75): every draft runs to n-max however unsure "
            "the draft is; gammatune doctor --for llama.cpp ranks p-min 0.5/0.75/0.9 on your pair") if zero else None


def _greedy_draft(c: Command) -> str | None:
    if c.engine != "vllm" or str(c.spec_config().get("draft_sample_method", "")).lower() != "greedy":
        return None
    return ("draft_sample_method greedy: for sampled requests the draft is a point mass, so each token is accepted "
            "with the target's probability alone and acceptance collapses at temperature > 0 (vLLM tracker reports, "
            "2026)")


def _mtp_chain(c: Command) -> str | None:
    k = c.k()
    if c.method() not in ("mtp", "nextn", "draft-mtp") or k is None or k <= 1:
        return None
    return (f"K={k} chains a one-layer MTP head past its depth: acceptance past the first position is low "
            "(halogen #81), and vLLM refuses a K above n_predict that is not a multiple of it; measure K with "
            "gammatune doctor --drafters mtp --for vllm,sglang,llama.cpp")


def _mtp_slower(c: Command) -> str | None:
    if c.method() not in ("mtp", "nextn", "draft-mtp"):
        return None
    return ("an MTP head projects onto the whole vocabulary at every draft: on a small target that can cost more than "
            "it saves even at 96 % acceptance (vLLM #39680: Qwen3.5-0.8B 342 → 128 tok/s); compare tok/s with "
            "speculation off (gammatune doctor shows the step costs; --mtp-vocab N drafts over N tokens)")


def _sglang_draft_tokens(c: Command) -> str | None:
    if c.engine != "sglang" or c.flags.get("--speculative-eagle-topk", "1") != "1":
        return None
    steps, tokens = c.flags.get("--speculative-num-steps"), c.flags.get("--speculative-num-draft-tokens")
    if not (steps and tokens and steps.isdigit() and tokens.isdigit()) or int(tokens) == int(steps) + 1:
        return None
    return (f"with --speculative-eagle-topk 1 a step verifies num-steps + 1 tokens: --speculative-num-draft-tokens "
            f"{tokens} with --speculative-num-steps {steps} should be {int(steps) + 1} (SGLang docs, "
            "speculative_decoding.md)")


def _long_context(c: Command) -> str | None:
    values = [c.flags[f] for f in CONTEXT_FLAGS if f in c.flags and c.flags[f].isdigit()]
    if not c.speculates() or not values or int(values[0]) < LONG_CONTEXT:
        return None
    return (f"a context of {int(values[0]):,} tokens: acceptance falls as the context grows (vLLM #52258); read it by "
            "context bucket from your server's per-request metrics (gammatune doctor --server-log)")


def _moe(c: Command) -> str | None:
    try:
        cfg = json.loads((Path(c.model).expanduser() / "config.json").read_text()) if c.model else {}
    except (OSError, ValueError):
        return None
    cfg = cfg.get("text_config", cfg) if isinstance(cfg, dict) else {}
    experts = max(int(cfg.get(k) or 0) for k in ("num_experts", "n_routed_experts", "num_local_experts"))
    top = int(cfg.get("num_experts_per_tok") or cfg.get("moe_topk") or 0)
    if not c.speculates() or experts <= 1:
        return None
    return (f"a mixture-of-experts target ({experts} experts, {top or '?'} per token): a K-token verify routes K + 1 "
            "tokens to the union of their experts, so it costs far more than one decode step and the draft's gain "
            "shrinks (vLLM and SGLang tracker reports, 2026); gammatune doctor measures c(k) on your target")


def _version_pin(c: Command, versions: Callable[[str], str | None]) -> str | None:
    if c.engine != "vllm":
        return None
    vllm, hf = versions("vllm"), versions("transformers")
    if not (vllm and hf and vllm.startswith("0.33")):
        return None
    major, minor = (int(x) for x in hf.split(".")[:2])
    if (major, minor) < (5, 21):
        return None
    return (f"vLLM {vllm} pins transformers < 5.21 and this environment has {hf}: pip will downgrade it, or vLLM "
            "fails to load the model (vLLM's requirements, 0.33)")


def installed_version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


RULES: tuple[tuple[str, Callable[[Command], str | None]], ...] = (
    ("renamed flag", _renamed), ("p-min at 0.00", _p_min), ("greedy draft sampling", _greedy_draft),
    ("MTP chained past its depth", _mtp_chain), ("MTP slower than plain", _mtp_slower),
    ("SGLang draft tokens", _sglang_draft_tokens), ("long context", _long_context), ("MoE verify", _moe),
)


def check(text: str, versions: Callable[[str], str | None] = installed_version) -> tuple[Command, list[tuple[str, str]]]:
    """The command parsed, and every pitfall it walks into as (name, the line the user sees)."""
    c = parse_command(text)
    found = [(name, line) for name, rule in RULES if (line := rule(c)) is not None]
    pin = _version_pin(c, versions)
    if pin is not None:
        found.append(("version pin", pin))
    return c, found


__all__ = ["Command", "RULES", "check", "installed_version", "parse_command"]
