"""The floors of docs/architecture.md, read off the package's own imports (a plain AST walk, nothing imported).

Every `import` counts, at module level or inside a function: a lazy import is
still a dependency. A failure names the module, the line and the rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "gammatune_tui"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# floor → the floors it may import (its own included). Leaf modules at the top are "base".
MAY_IMPORT: dict[str, set[str]] = {
    "base": {"base"},
    "engine": {"base", "engine"},
    "demo": {"base", "engine", "demo"},
    "session": {"base", "engine", "session"},
    "hf": {"base", "engine", "hf"},
    "render": {"base", "engine", "session", "render"},
    "bench": {"base", "engine", "session", "bench"},
    "ui": {"base", "engine", "session", "render", "ui"},
    "commands": {"base", "engine", "demo", "hf", "session", "render", "bench", "ui", "commands"},
}
# floor → third-party packages it must not import
MUST_NOT_USE: dict[str, set[str]] = {
    "base": {"textual", "rich", "torch", "transformers"},
    "engine": {"textual", "rich", "textual_plotext", "typer", "click"},
    "demo": {"textual", "rich", "typer", "click"},
    "session": {"textual", "rich", "textual_plotext", "typer", "click"},
    "hf": {"textual", "rich", "textual_plotext", "typer", "click"},
    "render": {"textual", "textual_plotext", "typer", "click"},
    "bench": {"textual", "textual_plotext", "typer", "click"},
    "ui": {"typer", "click"},
    "commands": set(),
}
TOP_LEVEL = {"__init__": "base", "errors": "base", "resources": "base", "prompts": "base",
             "cli": "commands", "__main__": "commands"}
# bench/'s rooms → the rooms they may import (their own included); "bench" is bench/'s own modules
# (args.py, results.py), which every room shares. live/ and sim/ do not know each other.
BENCH_ROOMS: dict[str, set[str]] = {
    "bench": {"bench"},
    "live": {"bench", "live"},
    "sim": {"bench", "sim"},
    "report": {"bench", "sim", "report"},
    "modes": {"bench", "live", "sim", "report", "deploy", "modes"},
    "deploy": {"bench", "sim", "deploy"},
    "doctor": {"bench", "live", "sim", "report", "modes", "deploy", "doctor"},
}

# engine/'s rooms → the rooms they may import (their own included), bottom up. "core" is the step
# core, the modules directly in engine/ (decoder, verification, kv_cache, plain, context…); "engine" is
# the package's own __init__, the public API, which names a thing from every room. common/ imports
# no other room; policies/ only common/ (a parameter's declaration, common/param_spec.py, is shared
# with the draft sources' rows); runners/ sits on common/ alone (a session's γ max is an argument of its
# start), events/ and drafting/ on both; the step core drives
# those three; loading/ builds a pair and warms the core up.
ENGINE_ROOMS: dict[str, set[str]] = {
    "common": {"common"},
    "policies": {"common", "policies"},
    "runners": {"common", "runners"},   # a runner knows no policy: γ max comes as an argument
    "events": {"common", "policies", "events"},
    "drafting": {"common", "policies", "runners", "drafting"},
    "core": {"common", "policies", "runners", "events", "drafting", "core"},
    "loading": {"common", "policies", "runners", "drafting", "core", "loading"},
    "engine": {"common", "policies", "runners", "events", "drafting", "core", "loading", "engine"},
}


def floor_of(module: str) -> str:
    """`gammatune_tui.session.replay` → "session"; top-level modules by TOP_LEVEL."""
    parts = module.split(".")
    if len(parts) == 1:
        return "base"
    if parts[1] in TOP_LEVEL:
        return TOP_LEVEL[parts[1]]
    return parts[1]


def bench_room_of(module: str) -> str | None:
    """`gammatune_tui.bench.sim.oracle` → "sim"; `gammatune_tui.bench.args` → "bench"; None outside bench/."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] != "bench":
        return None
    return parts[2] if len(parts) > 2 and parts[2] in BENCH_ROOMS else "bench"


def engine_room_of(module: str) -> str | None:
    """`gammatune_tui.engine.drafting.prompt_lookup` → "drafting"; `gammatune_tui.engine.decoder` → "core";
    `gammatune_tui.engine` → "engine"; None outside engine/."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] != "engine":
        return None
    if len(parts) == 2:
        return "engine"
    return parts[2] if parts[2] in ENGINE_ROOMS else "core"


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool, known: set[str]) -> list[tuple[int, str]]:
    """(line, imported name) for every import in `source`: package modules absolute, others by top name."""
    out: list[tuple[int, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:   # `from .. import resources` imports the module gammatune_tui.resources
                sub = f"{target}.{alias.name}"
                out.append((node.lineno, sub if sub in known else target))
    return out


def violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import that breaks a floor rule, for modules given as name → (source, is_package)."""
    known = set(modules)
    found = []
    for name, (source, is_package) in sorted(modules.items()):
        floor = floor_of(name)
        for line, imported in sorted(set(imports_of(source, name, is_package, known))):
            top = imported.split(".")[0]
            if top == PACKAGE:
                other = floor_of(imported)
                if other not in MAY_IMPORT[floor]:
                    found.append(f"{name}:{line} imports {imported}: {floor}/ may not import {other}/")
            elif top in MUST_NOT_USE[floor]:
                found.append(f"{name}:{line} imports {top}: {floor}/ must not use {top}")
    return found


def room_violations(modules: dict[str, tuple[str, bool]], room_of, rooms: dict[str, set[str]], where: str) -> list[str]:
    """Every import inside one floor that goes up or across its rooms (`room_of` names a module's room, None
    outside the floor; `rooms` says which rooms each may import)."""
    known = set(modules)
    found = []
    for name, (source, is_package) in sorted(modules.items()):
        room = room_of(name)
        if room is None:
            continue
        for line, imported in sorted(set(imports_of(source, name, is_package, known))):
            other = room_of(imported)
            if other is not None and other not in rooms[room]:
                found.append(f"{name}:{line} imports {imported}: {where}/{room} may not import {where}/{other}")
    return found


def bench_violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import inside bench/ that goes up or across its rooms (BENCH_ROOMS)."""
    return room_violations(modules, bench_room_of, BENCH_ROOMS, "bench")


def engine_violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import inside engine/ that goes up or across its rooms (ENGINE_ROOMS)."""
    return room_violations(modules, engine_room_of, ENGINE_ROOMS, "engine")


def cycles(modules: dict[str, tuple[str, bool]]) -> list[list[str]]:
    """The import circles among the package's modules (strongly connected components, Tarjan)."""
    known = set(modules)
    graph = {name: sorted({imp for _, imp in imports_of(src, name, pkg, known) if imp in known and imp != name})
             for name, (src, pkg) in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def package_modules(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    return {module_name(p, root): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
            for p in sorted(root.rglob("*.py"))}


MODULES = package_modules()


def test_every_module_belongs_to_a_floor():
    assert {floor_of(m) for m in MODULES} <= set(MAY_IMPORT)
    assert {"engine", "session", "render", "ui", "commands", "bench", "demo", "base"} <= {floor_of(m) for m in MODULES}


def test_imports_only_go_down_the_floors():
    assert violations(MODULES) == []


def test_no_import_circles():
    assert cycles(MODULES) == []


def test_bench_sub_rooms_are_listed():
    """A new sub-package of bench/ must be given its place among the rooms."""
    rooms = {p.parent.name for p in (ROOT / "bench").glob("*/__init__.py")}
    assert rooms == set(BENCH_ROOMS) - {"bench"}


def test_bench_rooms_import_only_down():
    assert bench_violations(MODULES) == []


def test_engine_sub_rooms_are_listed():
    """A new sub-package of engine/ must be given its place among the rooms."""
    rooms = {p.parent.name for p in (ROOT / "engine").glob("*/__init__.py")}
    assert rooms == set(ENGINE_ROOMS) - {"core", "engine"}


def test_engine_rooms_import_only_down():
    assert engine_violations(MODULES) == []


def test_engine_rooms_form_floors():
    """The rule itself has no circle: each room may import only rooms listed before it (and itself)."""
    order = list(ENGINE_ROOMS)
    for i, room in enumerate(order):
        assert ENGINE_ROOMS[room] <= set(order[: i + 1]), room


# -- the checks themselves can fail -----------------------------------------------------------------

def _fake(**sources: str) -> dict[str, tuple[str, bool]]:
    return {name.replace("__", "."): (src, False) for name, src in sources.items()}


@pytest.mark.parametrize("module, source, rule", [
    ("gammatune_tui__engine__x", "from ..ui.app import make_app\n", "engine/ may not import ui/"),
    ("gammatune_tui__engine__x", "def f():\n    from ..demo import PAIR_DIR\n", "engine/ may not import demo/"),
    ("gammatune_tui__session__x", "from ..render.printer import legend\n", "session/ may not import render/"),
    ("gammatune_tui__session__x", "import textual.app\n", "session/ must not use textual"),
    ("gammatune_tui__render__x", "from textual.widgets import Static\n", "render/ must not use textual"),
    ("gammatune_tui__ui__x", "from ..commands.compare import compare\n", "ui/ may not import commands/"),
    ("gammatune_tui__bench__x", "from ..ui.app import make_app\n", "bench/ may not import ui/"),
    ("gammatune_tui__engine__x", "import gammatune_tui.session.stats\n", "engine/ may not import session/"),
])
def test_a_broken_rule_is_reported(module, source, rule):
    found = violations(_fake(**{module: source}))
    assert len(found) == 1 and rule in found[0] and ":" in found[0]


def test_a_circle_is_reported():
    mods = _fake(gammatune_tui__session__a="from .b import x\n", gammatune_tui__session__b="def f():\n    from .a import y\n",
                 gammatune_tui__session__c="from .a import z\n")
    assert cycles(mods) == [["gammatune_tui.session.a", "gammatune_tui.session.b"]]


@pytest.mark.parametrize("module, source, rule", [
    ("gammatune_tui__bench__sim__x", "from ..live import protocol\n", "bench/sim may not import bench/live"),
    ("gammatune_tui__bench__live__x", "def f():\n    from ..sim.oracle import ORACLE\n", "bench/live may not import bench/sim"),
    ("gammatune_tui__bench__x", "from .report.tables import write_json\n", "bench/bench may not import bench/report"),
    ("gammatune_tui__bench__modes__x", "from ..doctor.examine import Candidate\n", "bench/modes may not import bench/doctor"),
    ("gammatune_tui__engine__common__x", "from ..decoder import SpeculativeDecoder\n", "engine/common may not import engine/core"),
    ("gammatune_tui__engine__policies__x", "from ..runners import Runner\n", "engine/policies may not import engine/runners"),
    ("gammatune_tui__engine__drafting__x", "def f():\n    from ..events import StepEvent\n", "engine/drafting may not import engine/events"),
    ("gammatune_tui__engine__events__x", "from ..drafting.self_draft import build_self_draft\n", "engine/events may not import engine/drafting"),
    ("gammatune_tui__engine__runners__x", "from ..loading.models import ModelPair\n", "engine/runners may not import engine/loading"),
    ("gammatune_tui__engine__x", "from .loading.warmup import warm_up\n", "engine/core may not import engine/loading"),
    ("gammatune_tui__engine__x", "from gammatune_tui.engine import load_pair\n", "engine/core may not import engine/engine"),
])
def test_a_room_importing_up_or_across_is_reported(module, source, rule):
    """bench/'s and engine/'s rooms: an import up or across is reported, by the check of that floor only."""
    mods = _fake(**{module: source})
    found = bench_violations(mods) + engine_violations(mods)
    assert len(found) == 1 and rule in found[0] and ":" in found[0]
