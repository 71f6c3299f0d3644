"""The γ policies of docs/spec.md §2 by name: the method registry, `make_policy` and `PolicySettings`.

A method is one file (its `Policy` subclass: engine/policies/paper_policies.py holds
the paper's five, engine/policies/adaptive_k.py and engine/policies/costaware_policy.py one
each) plus one row in `REGISTRY` below; its parameters are rows of
engine/policies/param_specs.py. Every policy plans within [γ_min, γ_max] (costaware
may also plan 0: a plain target step); bounds the caller did not set widen to
take in γ0, bounds it did set clip the first window (`_fit_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import InvalidParameter
from .adaptive_k import AdaptiveK
from .confidence import roc_threshold  # noqa: F401  (re-exported)
from .costaware_policy import CostAware
from .paper_policies import AssistantThreshold, GammaTune, GammaTunePlus, HFHeuristic, SpecDecode
from .peer_policies import AdaEDL, EmaTiers, PMin, SVIP, UCB
from .param_specs import BY_NAME, check_gamma0 as _check_gamma0, markdown_table
from .policy_base import Policy
from .policy_params import (  # noqa: F401  (re-exported: the policies' public names)
    DEFAULT_ETA, DEFAULT_GAMMA_MAX, DEFAULT_GAMMA0, PAPER_DEFAULTS, PARAM_NAMES, PolicyParams,
)


def _fit_bounds(gamma0: int, params: PolicyParams, given: dict[str, Any]) -> PolicyParams:
    """γ0 outside the bounds: a bound the caller left at its default moves to γ0; one it set stays.

    So `--gamma 1` runs at 1 (γ_min follows it) and `--gamma 100` may grow to
    100, while `--gamma 100 --gamma-max 16` starts at 16 (the CLI refuses that
    pair before it gets here, naming both flags).
    """
    changes: dict[str, int] = {}
    if gamma0 < params.gamma_min and given.get("gamma_min") is None:
        changes["gamma_min"] = gamma0
    if gamma0 > params.gamma_max and given.get("gamma_max") is None:
        changes["gamma_max"] = gamma0
    return replace(params, **changes) if changes else params


# -- the method registry: one row per method ----------------------------------------------------------
GROUPS: dict[str, str] = {"paper": "the paper's", "peer": "peers'", "own": "gammatune's own"}
"""Method groups, in the order every list shows them: the paper's five, the peers' rules, gammatune's own."""


@dataclass(frozen=True)
class MethodSpec:
    """One method: its class (which declares its name, the parameters it reads and whether it may stop
    a window early), its group, and the parameters `bench --tune` searches for it."""

    cls: type[Policy]
    group: str
    tuned: tuple[str, ...] = ()
    live_default: bool = True
    """Run by a live `bench` and `compare` when no --methods is given (p-min, adaedl, svip, ema-tiers and ucb
    are not, so a default run stays the length it was; `--methods all` and `bench --simulate` run every method)."""

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def reads(self) -> tuple[str, ...]:
        return self.cls.uses

    @property
    def stops_early(self) -> bool:
        return self.cls.may_stop_early

    def tuned_names(self) -> tuple[str, ...]:
        """What `bench --tune` searches: the row's list, else every parameter it reads that has a grid."""
        return self.tuned or tuple(n for n in self.reads if BY_NAME[n].grid)


_PAPER_TUNED = ("eta", "delta", "tau", "gamma_min", "gamma_max")
REGISTRY: tuple[MethodSpec, ...] = (
    MethodSpec(SpecDecode, "paper", _PAPER_TUNED),
    MethodSpec(HFHeuristic, "paper", _PAPER_TUNED),
    MethodSpec(AssistantThreshold, "paper", _PAPER_TUNED),
    MethodSpec(GammaTune, "paper", _PAPER_TUNED),
    MethodSpec(GammaTunePlus, "paper", _PAPER_TUNED),
    MethodSpec(AdaptiveK, "peer", ("ema_alpha", "alpha_prior", "cooldown", "gamma_min", "gamma_max")),
    MethodSpec(PMin, "peer", ("p_min",), live_default=False),
    MethodSpec(AdaEDL, "peer", ("edl_lambda", "edl_target"), live_default=False),
    MethodSpec(SVIP, "peer", ("svip_h",), live_default=False),
    MethodSpec(EmaTiers, "peer", ("gamma_min", "gamma_max"), live_default=False),
    MethodSpec(UCB, "peer", ("gamma_min", "gamma_max"), live_default=False),
    MethodSpec(CostAware, "own", ("calib_weight", "calib_forget", "gamma_max")),
)
_BY_METHOD: dict[str, MethodSpec] = {m.name: m for m in REGISTRY}
assert len(_BY_METHOD) == len(REGISTRY), "every method has a name of its own"
assert [m.group for m in REGISTRY] == sorted((m.group for m in REGISTRY), key=list(GROUPS).index), \
    "the registry lists the methods group by group, in the order of GROUPS"
assert all(n in BY_NAME and BY_NAME[n].in_params for m in REGISTRY for n in m.reads + m.tuned), \
    "a method reads and tunes only parameters declared in engine/policies/param_specs.py"
METHODS: tuple[str, ...] = tuple(_BY_METHOD)
LIVE_DEFAULT_METHODS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.live_default)
TUNABLE_METHODS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.reads)
"""What `bench --tune-method` accepts: every method that reads a parameter (specdecode's fixed γ has none)."""


def check_method(name: str) -> str:
    if name not in _BY_METHOD:
        raise InvalidParameter(f"unknown method {name!r}; expected one of {', '.join(METHODS)}")
    return name


def method_spec(name: str) -> MethodSpec:
    return _BY_METHOD[check_method(name)]


def grouped_methods() -> list[tuple[str, tuple[str, ...]]]:
    """[(group's words, its methods)] in registry order, for lists that show the groups."""
    return [(words, names) for g, words in GROUPS.items()
            if (names := tuple(m.name for m in REGISTRY if m.group == g))]


def used_params(method: str) -> tuple[str, ...]:
    """The parameters `method` reads besides γ0 (specdecode and hf-heuristic: none)."""
    return method_spec(method).reads


def readers(param: str) -> tuple[str, ...]:
    """The methods that read `param` (none listed: every method, as for γ0)."""
    return tuple(m.name for m in REGISTRY if param in m.reads)


def param_help(param: str) -> str:
    """A parameter's help, led by its method's name where one method alone reads it ('costaware: …')."""
    who = readers(param)
    text = BY_NAME[param].help
    return f"{who[0]}: {text}" if len(who) == 1 else text


def parameter_table() -> str:
    """docs/policies.md's parameter table: every row of engine/policies/param_specs.py with the methods that read it."""
    return markdown_table({name: readers(name) for name in BY_NAME})


def parse_methods(text: "str | list[str] | tuple[str, ...] | None", *, at_least: int = 1,
                  at_most: int | None = None) -> list[str]:
    """`--methods` for bench and compare: 'a,b' or 'all' (None or blank = all of METHODS).

    An empty entry ('gammatune,') or a repeated one is refused rather than
    guessed at: both are usually typos.
    """
    at_most = len(METHODS) if at_most is None else at_most
    if text is None or (isinstance(text, str) and not text.strip()) or text == "all":
        items = list(METHODS)
    else:
        items = [m.strip() for m in text.split(",")] if isinstance(text, str) else [str(m).strip() for m in text]
    if any(m == "" for m in items):
        raise InvalidParameter(f"--methods must be a comma-separated list of {', '.join(METHODS)} (or all), got {text!r}")
    for m in items:
        check_method(m)
    dupes = sorted({m for m in items if items.count(m) > 1})
    if dupes:
        raise InvalidParameter(f"--methods lists {', '.join(dupes)} more than once")
    if not (at_least <= len(items) <= at_most):
        raise InvalidParameter(f"--methods needs {at_least} to {at_most} methods, got {len(items)} ({', '.join(items)}); "
                               f"choose from {', '.join(METHODS)}")
    return items


def make_policy(name: str, gamma0: int, **params: Any) -> Policy:
    """Build a policy by its CLI name; raises ValueError (InvalidParameter) on bad input."""
    cls = method_spec(name).cls
    gamma0 = _check_gamma0(gamma0)
    return cls(gamma0, _fit_bounds(gamma0, PolicyParams.build(**params), params))


@dataclass(frozen=True)
class PolicySettings:
    """Everything that defines a policy, frozen so the UI can swap it in one assignment.

    The live session applies a new settings object at the next step boundary:
    same method → `set_params` (the learned state carries over); another
    method or γ0 → a fresh policy.
    """

    method: str = "gammatune+"
    gamma0: int = DEFAULT_GAMMA0
    params: PolicyParams = field(default_factory=PolicyParams)

    @classmethod
    def build(cls, method: str = "gammatune+", gamma0: int = DEFAULT_GAMMA0, **params: Any) -> "PolicySettings":
        g = _check_gamma0(gamma0)
        return cls(check_method(method), g, _fit_bounds(g, PolicyParams.build(**params), params))

    def with_changes(self, **changes: Any) -> "PolicySettings":
        method = check_method(changes.pop("method", self.method))
        gamma0 = _check_gamma0(changes.pop("gamma0", self.gamma0))
        params = PolicyParams.build(self.params, **changes)
        if gamma0 != self.gamma0:  # a new γ0 carries the bounds not changed with it
            params = _fit_bounds(gamma0, params, changes)
        return PolicySettings(method, gamma0, params)

    def make(self) -> Policy:
        return _BY_METHOD[self.method].cls(self.gamma0, self.params)

    def apply_to(self, policy: Policy | None) -> Policy:
        """The policy to use from now on: `policy` updated in place if it can be, else a new one."""
        if policy is not None and policy.name == self.method and policy.gamma0 == self.gamma0:
            if policy.params != self.params:
                policy.params = self.params
                policy._on_params()
            return policy
        return self.make()
