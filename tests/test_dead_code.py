"""No dead module-level names in the package: every constant, function and class it defines is read somewhere
(in the package, its tests or benchmarks/). A name only re-exported by an import is not a use."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gammatune_tui"


def _read_names(tree: ast.AST) -> set[str]:
    """Names a module reads: loaded names, attributes, string constants (`__all__`, getattr) and import aliases."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)
        elif isinstance(node, ast.ImportFrom):   # `import X as Y`: Y is what is read; X is used under its alias
            out.update(a.name for a in node.names if a.asname and a.asname != a.name)
    return out


def _defined(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
    return [n for n in names if not n.startswith("__")]


def test_every_module_level_name_of_the_package_is_read_somewhere():
    files = [p for d in ("gammatune_tui", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in files}
    read = set().union(*(_read_names(t) for t in trees.values()))
    dead = [f"{p.relative_to(ROOT)}: {name}" for p, t in trees.items() if PACKAGE in p.parents
            for name in _defined(t) if name not in read]
    assert dead == [], "defined and never read:\n" + "\n".join(dead)
