"""The trace kinds are rows resolved by import: every class a row names is one import away.

bench/sim/trace_kinds.py `KINDS` used to find each kind from a "module:NAME" string through
importlib, which neither mypy nor tests/test_architecture.py could see (and which hid the circle
simulate/oracle/hindsight → trace_kinds → model_kind → those three). These tests hold what replaced it:
each kind conforms to the `TraceKind` protocol, every draft source the engine lists has one, and no
module of the package loads a class by a string again.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from gammatune_tui.bench.sim.trace_kinds import KINDS, TraceKind, trace_kind
from gammatune_tui.engine.common.names import SOURCES
from gammatune_tui.errors import InvalidParameter

PKG = Path(__file__).resolve().parents[2] / "gammatune_tui"
MEMBERS = [n for n, v in vars(TraceKind).items() if inspect.isfunction(v) and not n.startswith("_")]


def test_the_protocol_has_the_members_the_simulator_calls():
    assert set(MEMBERS) == {"record", "from_json", "play", "step_options", "from_session"}


@pytest.mark.parametrize("source", sorted(KINDS))
def test_each_row_is_a_trace_kind_with_the_protocols_methods(source):
    kind = KINDS[source]
    assert kind.name == source
    for member in MEMBERS:
        want = list(inspect.signature(getattr(TraceKind, member)).parameters)[1:]   # without self
        got = list(inspect.signature(getattr(kind, member)).parameters)
        assert got == want, f"{type(kind).__name__}.{member}{got} does not match TraceKind.{member}{want}"


def test_every_draft_source_has_its_kind_and_each_kind_a_source():
    """Every row is traced (a row without has_traces would be refused in one line by `bench --simulate`); the
    heads (MTP, EAGLE-3, DFlash), which read the target and chain on their own output, share the head kind."""
    from gammatune_tui.bench.sim.head_trace import HeadKind

    assert set(KINDS) == {s.name for s in SOURCES} and all(s.has_traces for s in SOURCES)
    heads = {s.name for s in SOURCES if not s.loads_draft and not s.point_mass}   # mtp, eagle3, dflash
    assert {n for n, k in KINDS.items() if isinstance(k, HeadKind)} == heads and len(heads) >= 3
    assert trace_kind("self:int4") is KINDS[SOURCES[0].name]   # a self-draft drafts as the model
    with pytest.raises(InvalidParameter, match="no traces for drafter 'nowhere'"):
        trace_kind("nowhere")


def test_no_module_loads_a_class_by_a_string():
    """importlib.import_module / __import__ with a computed name: an edge no checker sees."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in ("import_module", "__import__"):
                    found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert found == []
