"""A mypy plugin that types `PolicyParams`' fields by their `ParamSpec` rows.

`PolicyParams` is made at run time from the rows of
gammatune_tui/engine/policies/param_specs.py (a parameter is one row and
nothing more), so mypy cannot see its fields. This plugin reads the same rows
and gives each field the type its row's `kind` says the value is held as: an
int, a bool, or for a float the exact `Fraction` the user typed
(`ParamSpec.check`). A name no row declares is an error, as it is at run time.
Configured in pyproject.toml's `[tool.mypy]`; `make typecheck` runs it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from mypy.errorcodes import ATTR_DEFINED
from mypy.plugin import AttributeContext, Plugin, ReportConfigContext
from mypy.types import Type

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the rows of this checkout, not an installed copy
try:
    from gammatune_tui.engine.policies.param_specs import PARAM_SPECS
finally:
    del sys.path[0]   # mypy checks its own entry there once the plugin is imported

CLASS = "gammatune_tui.engine.policies.policy_params.PolicyParams"
_HELD_AS = {int: "builtins.int", bool: "builtins.bool", float: "fractions.Fraction"}
KINDS: dict[str, str] = {s.name: _HELD_AS[s.kind] for s in PARAM_SPECS}


def _field_type(ctx: AttributeContext, name: str) -> Type:
    kind = KINDS.get(name)
    if kind is None:
        ctx.api.fail(f'"PolicyParams" has no parameter "{name}" (no row in param_specs.py declares it)',
                     ctx.context, code=ATTR_DEFINED)
        return ctx.default_attr_type
    return ctx.api.named_generic_type(kind, [])


class PolicyParamsPlugin(Plugin):
    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        owner, _, name = fullname.rpartition(".")
        if owner == CLASS and not name.startswith("__"):
            return lambda ctx: _field_type(ctx, name)
        return None

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        # a changed row rechecks every module (the rows are not part of any module's interface mypy tracks)
        return KINDS


def plugin(version: str) -> type[Plugin]:
    return PolicyParamsPlugin
