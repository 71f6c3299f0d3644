"""The validated tunables every γ policy reads (docs/spec.md §2.1), built from their one declaration.

One frozen `PolicyParams` holds the parameters of all the policies (each uses
the ones it needs), so the UI can swap a whole setting in one assignment and a
recording can say what was in force. Its fields, their defaults and their
checks all come from the rows of engine/policies/param_specs.py: values are checked
there, once, with messages that name the parameter and its range; η, τ and
the other fractions are kept as exact rationals of what the user typed.
"""

from __future__ import annotations

from dataclasses import field, make_dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ...errors import InvalidParameter
from .param_specs import (  # noqa: F401  (re-exported: the parameters' public names)
    BY_NAME, PAPER_DEFAULTS, PARAM_NAMES, PARAM_SPECS, check_gamma0 as _check_gamma0,
)

# the rows' kinds: γ0 and γ max are whole numbers, η a float
DEFAULT_GAMMA0 = cast(int, BY_NAME["gamma0"].default)
DEFAULT_ETA = cast(float, BY_NAME["eta"].default)
DEFAULT_GAMMA_MAX = cast(int, BY_NAME["gamma_max"].default)


class _Params:
    """What `PolicyParams` adds to its fields (which are made from the rows, below)."""

    @classmethod
    def build(cls, base: PolicyParams | None = None, **params: Any) -> PolicyParams:
        """New parameters from `base` (default: the defaults) with `params` checked and set (None = unchanged)."""
        unknown = set(params) - set(PARAM_NAMES)
        if unknown:
            raise InvalidParameter(
                f"unknown policy parameter {sorted(unknown)[0]!r}; expected one of {', '.join(PARAM_NAMES)}"
            )
        values = {s.name: s.check(params[s.name]) for s in PARAM_SPECS if params.get(s.name) is not None}
        out = replace(base or PolicyParams(), **values)
        if out.gamma_min > out.gamma_max:
            raise InvalidParameter(
                f"gamma_min must be <= gamma_max, got gamma_min={out.gamma_min} > gamma_max={out.gamma_max}"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """The parameters as JSON numbers; those not every session records only where they differ from the defaults.

        So the sessions of the other methods record exactly what they did
        before those parameters existed; a method's `describe()` always lists
        the ones it reads.
        """
        return {s.name: s.to_json(getattr(self, s.name)) for s in PARAM_SPECS
                if s.recorded or getattr(self, s.name) != s.stored_default}


if TYPE_CHECKING:
    class PolicyParams(_Params):
        """What the type checker sees: the fields are made at run time from the rows, so it cannot list them.

        The mypy plugin in tools/mypy_params.py types each field by its row (an int, the exact Fraction of
        a float, a bool) and reports a name no row declares; without the plugin a field reads as Any.
        """

        __dataclass_fields__: ClassVar[dict[str, Any]]   # a dataclass (dataclasses.replace, fields)

        def __init__(self, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
else:
    PolicyParams = make_dataclass(
        "PolicyParams",
        [(s.name, Any, field(default=s.stored_default)) for s in PARAM_SPECS],
        bases=(_Params,),
        frozen=True,
        namespace={"__doc__": "Validated tunables shared by all policies (each uses the ones it needs); "
                              "fields from engine/policies/param_specs.py."},
    )
    PolicyParams.__module__ = __name__   # so a PolicyParams pickles (the live session's child process)
