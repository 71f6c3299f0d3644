"""The model, policy and sampling options shared by run, chat, compare and bench.

Declared once and added to a command's signature by `@common_options`, so every
command spells and validates them the same way and hands the body one
`CommonOptions` object. Declaring them imports no torch (engine.common.names,
engine.policies): the engine's heavy modules load inside the methods that
use them, so `--help` and a mistyped flag answer at once.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence
from pathlib import Path

import typer

from ..engine.common.names import DRAFTERS, ENGINES, SELF_DRAFTS, SOURCE_PARAMS, SOURCES
from ..engine.common.names import MODEL as MODEL_DRAFTER
from ..engine.policies.param_specs import PARAM_NAMES, SAMPLING_BY_NAME, SAMPLING_SPECS, SPECS, ParamSpec
from ..engine.policies import PAPER_DEFAULTS, PolicyParams, PolicySettings, grouped_methods, param_help
from ..engine.context import check_budget
from ..engine.loading.presets import preset_drafter
from ..errors import InvalidParameter
from .input_checks import check_engine_environment
from ..prompts import seeded_demo_prompt
from ..render.safe_text import printable

if TYPE_CHECKING:
    from typer.models import OptionInfo

MODEL = "Model"
POLICY = "Policy"
SAMPLING = "Sampling"


def _opt(default: object, *names: str, help: str, panel: str, **kw: Any) -> Any:
    return typer.Option(default, *names, help=help, rich_help_panel=panel, **kw)


_MODEL_PARAMS: list[tuple[str, Any, Any]] = [
    ("target", Optional[str], _opt(None, "--target", help="Target model: local directory or hub id (read from the local Hugging Face cache; see --download).", metavar="MODEL", panel=MODEL)),
    ("draft", Optional[str], _opt(None, "--draft", help=f"Draft model: local directory or hub id sharing the target's vocabulary, or {', '.join(SELF_DRAFTS)}: the target's own weights quantized in memory at load (int4 groups: self:int4:gN, N 32 to 256), or {', '.join(s.name + ':PATH' for s in SOURCES if s.head_param)}: a head's folder (recognised from its config.json as plain PATH too).", metavar="MODEL", panel=MODEL)),
    ("draft_dtype", Optional[str], _opt(None, "--draft-dtype", help="The draft model's dtype when it differs from the target's (float32, float16, bfloat16; default: the target's). Output stays the target's, as loaded.", metavar="DTYPE", panel=MODEL)),
    ("pair", Optional[str], _opt(None, "--pair", help="A preset pair (see `gammatune models`). Default: the embedded demo pair.", metavar="NAME", panel=MODEL)),
    ("device", str, _opt("auto", "--device", help="auto (cuda, else mps, else cpu), cpu, cuda, cuda:N, mps.", metavar="DEVICE", panel=MODEL)),
    ("dtype", str, _opt("auto", "--dtype", help="auto (bfloat16 on a GPU that has it, else float16; on a CPU bfloat16 for a model of 64 MB+ where the CPU has AVX512-BF16 or AMX, else float32), float32, float16, bfloat16.", metavar="DTYPE", panel=MODEL)),
    ("quantize", Optional[str], _opt(None, "--quantize", help="Quantize the target's weights with optimum-quanto: int8 or int4.", metavar="BITS", panel=MODEL)),
    ("device_map", Optional[str], _opt(None, "--device-map", help="'auto': spread a target too large for one GPU with accelerate.", metavar="MAP", panel=MODEL)),
    ("trust_remote_code", bool, _opt(False, "--trust-remote-code", help="Allow model repos to run their own Python code (off by default).", panel=MODEL)),
    ("allow_pickle", bool, _opt(False, "--allow-pickle", help="Allow weights in pickle (.bin) format; by default only safetensors load.", panel=MODEL)),
    ("download", bool, _opt(False, "--download", help="Fetch hub models missing from the local Hugging Face cache (by default only the cache is read, and a missing model fails at once).", panel=MODEL)),
    ("threads", Optional[int], _opt(None, "--threads", help="torch CPU threads (default: 1 for models under 100M parameters, else the core count).", panel=MODEL, min=1)),
    ("engine", str, _opt("auto", "--engine", help=f"How forward passes run: {', '.join(ENGINES)} (auto: graphs on CUDA, static on CPU, eager for other architectures; docs/runners.md).", metavar="ENGINE", panel=MODEL)),
    ("drafter", Optional[str], _opt(None, "--drafter", help=f"Who drafts: {', '.join(DRAFTERS + SELF_DRAFTS)}. Without a draft model: {'; '.join(f'{s.name} {s.help}' for s in SOURCES if not s.loads_draft)}. A self-draft is the same as --draft self:int4 etc. Default: the draft model, or a preset's own drafter.", metavar="NAME", panel=MODEL)),
]


def _source_option(p: ParamSpec) -> tuple[str, Any, Any]:
    """A draft source's parameter as an option, from its row (engine/common/names.py `SOURCES`): the sources
    that read it lead its help; None = not given (the row's default)."""
    who = ", ".join(s.name for s in SOURCES if p in s.params)
    return p.name, Optional[p.kind], _opt(None, p.cli_flag, help=f"{who}: {p.help} (default {p.default}).",
                                          panel=MODEL)


_MODEL_PARAMS += [_source_option(p) for p in SOURCE_PARAMS.values()]

def _policy_option(s: ParamSpec) -> tuple[str, Any, Any]:
    """A parameter's option, from its row in engine/policies/param_specs.py (None = not given: the default, or a preset)."""
    text = param_help(s.name)
    if text == s.help:   # not led by a method's name
        text = text[0].upper() + text[1:]
    if s.kind is bool:
        return s.name, bool, _opt(False, s.cli_flag, help=f"{text}.", panel=POLICY)
    names = (s.cli_flag, s.short) if s.short else (s.cli_flag,)
    if not s.in_params:   # γ0: always a value (--help shows it), the option named after the flag
        return s.cli_flag.lstrip("-"), s.kind, _opt(s.default, *names, help=f"{text}, {s.range_text()}.",
                                                    panel=POLICY)
    return s.name, Optional[s.kind], _opt(None, *names, help=f"{text}, {s.range_text()} (default {s.default}).",
                                          panel=POLICY)


_METHOD_HELP = "γ policy: " + "; ".join(f"{', '.join(names)} ({words})" for words, names in grouped_methods()) + "."
_POLICY_PARAMS: list[tuple[str, Any, Any]] = [
    ("method", str, _opt("gammatune+", "--method", "-m", help=_METHOD_HELP, metavar="METHOD", panel=POLICY)),
    *(_policy_option(s) for s in SPECS),
    ("paper_defaults", bool, _opt(False, "--paper-defaults", help="Use the Table 2 preset for η, δ, τ and the γ bounds (" + ", ".join(f"{k.replace('gamma_', 'γ_')} {v}" for k, v in PAPER_DEFAULTS.items()).replace("eta", "η").replace("delta", "δ").replace("tau", "τ") + "); flags given beside it win.", panel=POLICY)),
]

def _sampling_help(name: str) -> str:
    """A sampling knob's help, from its row in engine/policies/param_specs.py."""
    return SAMPLING_BY_NAME[name].help


_SAMPLING_PARAMS: list[tuple[str, Any, Any]] = [
    ("temperature", Optional[float], _opt(None, "--temperature", "-t", help=_sampling_help("temperature"), panel=SAMPLING)),
    ("top_k", int, _opt(0, "--top-k", help=_sampling_help("top_k"), panel=SAMPLING)),
    ("top_p", Optional[float], _opt(None, "--top-p", help=_sampling_help("top_p"), panel=SAMPLING)),
    ("repetition_penalty", float, _opt(1.0, "--repetition-penalty", help=_sampling_help("repetition_penalty"), panel=SAMPLING)),
    ("seed", int, _opt(0, "--seed", help=_sampling_help("seed"), panel=SAMPLING)),
    ("max_new_tokens", int, _opt(256, "--max-new-tokens", "-n", help="Stop after this many new tokens.", panel=SAMPLING)),
    ("raw", bool, _opt(False, "--raw", help="Send the prompt as raw text, without the chat template.", panel=SAMPLING)),
]


# the engine's names (its Python API) → the flags a command-line user typed
FLAGS = {**{s.name: s.cli_flag for s in (*SPECS, *SAMPLING_SPECS)}, "max_new_tokens": "--max-new-tokens"}
_FLAG_WORDS = re.compile(r"(?<![-\w])(" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")\b")


def with_flag_names(message: str) -> str:
    """`gamma0 must be …` → `--gamma must be …`: an engine message in the words of the command line."""
    return _FLAG_WORDS.sub(lambda m: FLAGS[m.group(1)], message)


@contextlib.contextmanager
def flag_names() -> Iterator[None]:
    """Re-raises an InvalidParameter from the engine with the flags' names instead of its parameters'."""
    try:
        yield
    except InvalidParameter as exc:
        raise InvalidParameter(with_flag_names(str(exc))) from None


def check_threads(threads: int | None) -> None:
    """--threads at most this machine's cores: torch takes any number and crashes (or hangs) far above them."""
    if threads is None:
        return
    cores = os.cpu_count() or 1
    if threads > cores:
        raise InvalidParameter(f"--threads {threads} is more than this machine's {cores} CPU core"
                               f"{'s' * (cores != 1)}: give 1 to {cores}")


def draft_source(draft: object) -> str | None:
    """The head a `--draft` value names instead of a draft model: `mtp` (the target's own), `eagle3:PATH` or an
    EAGLE-3 head's folder; None for a draft model, a self-draft or nothing. Its flags (`--mtp-vocab`) then apply."""
    from ..engine.common.names import head_source
    from ..engine.drafting.draft_sources import folder_config
    from ..engine.loading.pair_refs import HEAD

    if not isinstance(draft, str):
        return None
    if draft.strip().lower() == HEAD and not Path(draft).is_dir():
        return HEAD
    head = head_source(draft, folder_config(draft))
    return head[0] if head is not None else None


@dataclass(frozen=True)
class CommonOptions:
    """Everything the shared options say, validated into engine objects on demand."""

    values: dict[str, Any]

    def __post_init__(self) -> None:
        # --engine is refused as the command starts, before a TUI opens or a model loads
        # (the engine's modules import torch: only loaded when there is something to check)
        engine = self.values.get("engine")
        if engine is not None and (engine not in ENGINES or engine == "graphs"):
            from ..engine.runners import check_engine, check_engine_device

            check_engine(engine, internal=False)
            if engine == "graphs" and self.values.get("device_map") is None:
                from ..engine.common.devices import resolve_device

                check_engine_device(engine, resolve_device(self.values.get("device", "auto")))
        v = self.values
        check_threads(v.get("threads"))
        check_engine_environment()
        if "drafter" in v and (v["drafter"] not in (None, MODEL_DRAFTER)
                               or any(v.get(k) is not None for k in SOURCE_PARAMS)):   # --drafter, its parameters
            d = self.drafter_settings()
            if not d.loads_draft and self.values.get("draft") and draft_source(self.values["draft"]) != d.name:
                raise InvalidParameter(f"--draft names a draft model, but --drafter {d.name} drafts without one: "
                                       "leave --draft out")

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def drafter_settings(self, name: str | None = None) -> Any:
        """--drafter (or `name`) with its own parameters' flags; a preset without a draft model drafts by its own."""
        from ..engine.drafting.draft_sources import DrafterSettings

        v = self.values
        if name is None:
            name = v.get("drafter")
            if name is None:   # `--draft mtp` / `--draft eagle3:PATH` drafts by that source (its flags apply), and
                # a preset without a draft model (smollm2) by its own drafter
                name = (draft_source(v.get("draft")) or preset_drafter(v.get("pair"), v.get("draft"))
                        or MODEL_DRAFTER)
        return DrafterSettings.of(name, **{k: v.get(k) for k in SOURCE_PARAMS})

    @property
    def uses_demo(self) -> bool:
        return not (self.values.get("target") or self.values.get("draft")
                    or self.values.get("pair") not in (None, "demo"))   # `--pair demo` is the default pair

    def policy_params(self, gamma0: int | None = None) -> dict[str, Any]:
        """The policy parameters the flags give (None = the default), `--paper-defaults` filled in.

        With `gamma0`: γ0 outside a bound the user typed is refused naming both
        flags; a bound left to a default (or to the preset) moves to take γ0 in.
        """
        v = self.values
        out: dict[str, Any] = {k: v.get(k) for k in PARAM_NAMES}
        out.update({k: None for k, x in out.items() if x is False})   # a switch left off is not given
        with flag_names():
            PolicyParams.build(**{k: x for k, x in out.items() if x is not None})  # each value in range first
        g = gamma0  # bench sweeps its own γ0s: it checks none here
        if g is not None:
            if out["gamma_min"] is not None and g < out["gamma_min"]:
                raise InvalidParameter(f"--gamma {g} is below --gamma-min {out['gamma_min']}: lower --gamma-min "
                                       "or raise --gamma")
            if out["gamma_max"] is not None and g > out["gamma_max"]:
                raise InvalidParameter(f"--gamma {g} is above --gamma-max {out['gamma_max']}: raise --gamma-max "
                                       "or lower --gamma")
        if v.get("paper_defaults"):
            for k, preset in PAPER_DEFAULTS.items():
                if out[k] is None:
                    out[k] = preset
            if g is not None and v.get("gamma_min") is None:
                out["gamma_min"] = min(out["gamma_min"], g)
            if g is not None and v.get("gamma_max") is None:
                out["gamma_max"] = max(out["gamma_max"], g)
        return out

    def check_flags_read(self, methods: Sequence[str], drafters: Sequence[Any] | None = None) -> None:
        """Each policy or drafter flag the user typed is read by a method or drafter this command runs.

        `run -m specdecode --eta 0.5` used to run specdecode as if --eta were
        not there; a user who typed it believes it changed something. The γ
        bounds are not checked: the decoder sizes its windows (warm-up, CUDA
        graphs) by γ_max for every method. chat does not call this, because
        its controls switch methods in the app, where a given η comes into play.
        """
        from ..engine.policies import readers

        v = self.values
        for name in PARAM_NAMES:
            if v.get(name) in (None, False) or name in ("gamma_min", "gamma_max"):
                continue
            who = readers(name)
            if who and not any(m in who for m in methods):
                flag = FLAGS[name]
                ran = (f"--method {methods[0]} does not read it" if len(methods) == 1
                       else f"none of {', '.join(methods)} reads it")
                raise InvalidParameter(f"{flag} belongs to {', '.join(who)}; {ran}: leave {flag} out, "
                                       f"or choose {'that method' if len(who) == 1 else 'one of those methods'}")
        given = [k for k in SOURCE_PARAMS if v.get(k) is not None]
        if not given:
            return
        ds = list(drafters) if drafters is not None else [self.drafter_settings()]
        for k in given:
            if not any(k in {p.name for p in d.spec.params} for d in ds):
                flag = SOURCE_PARAMS[k].cli_flag
                owners = [src.name for src in SOURCES if SOURCE_PARAMS[k] in src.params]
                names = ", ".join(d.name for d in ds)
                fix = f"add {owners[0]} to --drafters" if drafters is not None else f"add --drafter {owners[0]}"
                raise InvalidParameter(f"{flag} belongs to the {' and '.join(owners)} drafter"
                                       f"{'s' * (len(owners) > 1)}, and this run drafts with {names}: leave {flag} "
                                       f"out, or {fix}")

    def policy_settings(self, method: str | None = None, gamma0: int | None = None) -> PolicySettings:
        g = gamma0 if gamma0 is not None else self.values["gamma"]
        params = self.policy_params(g)
        with flag_names():
            return PolicySettings.build(method or self.values["method"], g, **params)

    def sampling(self, demo_defaults: bool = False) -> Any:
        """The SamplingConfig; the demo pair's greedy text loops, so it defaults to T = 0.7, top-p 0.9 (docs/demo-pair.md)."""
        from ..engine.common.sampling_config import SamplingConfig   # no torch: a bad value answers at once

        v = self.values
        t = v["temperature"]
        p = v["top_p"]
        if t is None:
            t = 0.7 if demo_defaults else 0.0
            if p is None and demo_defaults:
                p = 0.9
        with flag_names():
            return SamplingConfig(temperature=t, top_k=v["top_k"], top_p=1.0 if p is None else p, seed=v["seed"],
                                  repetition_penalty=v.get("repetition_penalty", 1.0))

    def load_kwargs(self) -> dict[str, Any]:
        v = self.values
        kw = {k: v[k] for k in ("target", "draft", "pair", "device", "dtype", "quantize", "device_map",
                                "trust_remote_code", "allow_pickle", "threads", "download")}
        if v.get("draft_dtype") not in (None, "auto"):
            kw["draft_dtype"] = v["draft_dtype"]
        kw["engine"] = v.get("engine", "auto")
        if "drafter" in v:
            kw["drafter"] = self.drafter_settings()
        return kw


def _hide(option: OptionInfo) -> OptionInfo:
    hidden = copy.copy(option)
    hidden.hidden = True
    return hidden


def common_options(*, model: bool = True, policy: bool = True, sampling: bool = True,
                   hidden: tuple[str, ...] = ()) -> Callable:
    """Adds the shared options to a Typer command; the body receives them as `opts`.

    `hidden` names options the command accepts but leaves out of its help
    (compare runs several methods, so its `--method` only exists to be refused).
    """
    groups = (_MODEL_PARAMS if model else []) + (_POLICY_PARAMS if policy else []) + (_SAMPLING_PARAMS if sampling else [])
    groups = [(n, ann, _hide(default) if n in hidden else default) for n, ann, default in groups]

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.name != "opts"]
        extra = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
            for name, ann, default in groups
        ]
        names = [name for name, _, _ in groups]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {n: kwargs.pop(n) for n in names}
            return fn(*args, opts=CommonOptions(values), **kwargs)

        own_kw = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind == inspect.Parameter.VAR_KEYWORD else p for p in own]
        wrapper.__signature__ = sig.replace(parameters=own_kw + extra)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def given_on_command_line(ctx: typer.Context | None, name: str) -> bool:
    """Whether an option was typed on the command line (not just left at its default)."""
    if ctx is None:
        return False
    src = ctx.get_parameter_source(name)
    return src is not None and src.name == "COMMANDLINE"


def prompt_or_demo(prompt: str | None, seed: int) -> str:
    """The user's prompt, or the demo prompt that `seed` picks (named on stderr); an empty prompt is refused."""
    if prompt is None:
        picked = seeded_demo_prompt(seed)
        first = picked.text.splitlines()[0] if picked.text.strip() else picked.text
        print(f"gammatune: no prompt given; using demo prompt {picked.id} ({picked.category}), picked by --seed {seed}: "
              f"{printable(first)}", file=sys.stderr)
        return picked.text
    if not prompt.strip():
        raise InvalidParameter("the prompt is empty")
    return prompt


def check_models(opts: CommonOptions, load_kwargs: dict[str, Any] | None = None) -> Any:
    """Before anything loads: the models exist and are models (or cached hub ids), and -n fits their context.

    Cheap (config files only, no weights, no network), so a command that
    starts an app can fail with one line and exit 2 first. The full check of
    prompt + max_new_tokens happens once the prompt is tokenized.
    """
    from ..engine.loading.models import check_pair

    refs = check_pair(**(load_kwargs if load_kwargs is not None else opts.load_kwargs()))
    if refs.window is not None:
        check_budget(refs.window, opts.max_new_tokens)
    return refs


def default_options(**overrides: Any) -> CommonOptions:
    """The shared options at their command-line defaults (what a command sees with no flags), with `overrides`.

    For scripts that must use exactly what the CLI would, e.g. the one that
    re-records the shipped demos (benchmarks/record_demos.py).
    """
    values = {name: getattr(option, "default", None) for name, _, option in
              _MODEL_PARAMS + _POLICY_PARAMS + _SAMPLING_PARAMS}
    unknown = set(overrides) - set(values)
    if unknown:
        raise InvalidParameter(f"unknown options: {', '.join(sorted(unknown))}")
    return CommonOptions({**values, **overrides})
