"""One pair type, read directly: no `pair: Any`, no `getattr(pair, …)` probes, no gammatune metadata hung on a
torch module (a plain AST walk of the package, nothing imported).

`ModelPair` (engine/common/pair.py) is what every floor types a pair by; a
self-draft's name, precision and build time are fields of the pair
(`ModelPair.self_draft`), so nothing the package writes onto a model carries
them. One attribute is allowed, and why is written beside it: the Hugging
Face entry point caches its pairs on the user's model (hf/pairs.py), since a
pair holds the model and a weak-keyed cache would keep it alive for ever.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "gammatune_tui"
ALLOWED_MODEL_ATTRIBUTES = {("hf/pairs.py", "_gammatune_pairs")}


def _is_pair(node: ast.AST) -> bool:
    """`pair` or `self.pair`."""
    return (isinstance(node, ast.Name) and node.id == "pair") or \
        (isinstance(node, ast.Attribute) and node.attr == "pair" and isinstance(node.value, ast.Name)
         and node.value.id == "self")


def findings(source: str, where: str) -> list[str]:
    """Each place in `source` that probes a pair, types one as Any, or names a gammatune attribute."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.arg == "pair" and isinstance(node.annotation, ast.Name) \
                and node.annotation.id == "Any":
            out.append(f"{where}:{node.lineno}: pair: Any")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and node.args and _is_pair(node.args[0]):
            out.append(f"{where}:{node.lineno}: {node.func.id}(pair, …)")
        elif isinstance(node, ast.Attribute) and node.attr.lstrip("_").startswith("gammatune_") \
                and (where, node.attr) not in ALLOWED_MODEL_ATTRIBUTES:
            out.append(f"{where}:{node.lineno}: .{node.attr}")
        elif isinstance(node, (ast.Call, ast.Assign)):   # setattr(m, "gammatune_…", v); NAME = "_gammatune_…"
            values = node.args[1:2] if isinstance(node, ast.Call) and _sets_attributes(node.func) else \
                [node.value] if isinstance(node, ast.Assign) else []
            for v in values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str) \
                        and v.value.lstrip("_").startswith("gammatune_") and (where, v.value) not in ALLOWED_MODEL_ATTRIBUTES:
                    out.append(f"{where}:{node.lineno}: {v.value!r}")
    return out


def _sets_attributes(func: ast.AST) -> bool:
    """setattr / getattr / hasattr / delattr, or an `object.__setattr__`."""
    return (isinstance(func, ast.Name) and func.id in ("setattr", "getattr", "hasattr", "delattr")) or \
        (isinstance(func, ast.Attribute) and func.attr == "__setattr__")


def test_the_package_types_pairs_by_modelpair_and_reads_their_fields():
    found = [f for p in sorted(ROOT.rglob("*.py"))
             for f in findings(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]
    assert found == []


def test_the_check_finds_each_kind():
    src = ("def f(pair: Any):\n    return getattr(pair, 'name_draft', '')\n"
           "class D:\n    def g(self):\n        return getattr(self.pair, 'is_demo', False)\n"
           "def h(draft):\n    draft.gammatune_self = 'self:int4'\n    setattr(draft, 'gammatune_build_s', 1.0)\n")
    assert sorted(f.split(": ", 1)[1] for f in findings(src, "x.py")) == sorted([
        "pair: Any", "getattr(pair, …)", "getattr(pair, …)", ".gammatune_self", "'gammatune_build_s'"])
    assert findings("_PAIRS_ATTR = '_gammatune_pairs'\n", "hf/x.py") == ["hf/x.py:1: '_gammatune_pairs'"]
    assert findings("_PAIRS_ATTR = '_gammatune_pairs'\n", "hf/pairs.py") == []
