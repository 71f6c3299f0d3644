"""Draft sources are plugins: a source is its own file plus one registry row, and nothing else names it.

Two checks of what docs/architecture.md ("Adding a draft source") promises:

* a throw-away source, one file and one row in engine/common/names.py
  `SOURCES`, is accepted by `--drafter`, listed by `--help`, and drafts in
  the decoder with the target's greedy output, with no other file edited;
* outside prompt lookup's own files (its source and its trace kind) and its
  row, no code names prompt lookup, and outside the n-gram pool's files and
  row none names the pool: the loop, the loaders, the commands and the
  simulator read the rows and the trace kinds only.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "gammatune_tui"

ECHO = '''
"""A throw-away source for the test: proposes the last accepted token again, up to the window."""
from . import Draft, DraftSource
from .prompt_lookup import point_mass_draft


class EchoSource(DraftSource):
    runner = None

    def __init__(self, copies):
        self.copies = copies

    def draft(self, ids, window, *, policy, served, gen, eos, device):
        n = min(window, self.copies)
        return point_mass_draft([ids[-1]] * n, [0.5] * n, [0.5] * n, window, policy, eos) if n else Draft(point_mass=True)
'''
ROW = ('    SourceSpec("echo", "echo_source:EchoSource", False, "repeat the last token", '
       '(ParamSpec("copies", int, 2, "copies", "tokens to propose", lo=1, hi=8),)),\n')

PROBE = r'''
import contextlib, importlib.util, io, json, sys
src = open(sys.argv[1]).read()
i = src.index("\n)\nBY_SOURCE")
src = src[:i + 1] + sys.argv[2] + src[i + 1:]          # the one row
spec = importlib.util.spec_from_loader("gammatune_tui.engine.common.names", loader=None)
import gammatune_tui.engine.common
names = importlib.util.module_from_spec(spec)
names.__package__ = "gammatune_tui.engine.common"
sys.modules[spec.name] = names
exec(compile(src, sys.argv[1], "exec"), names.__dict__)
from gammatune_tui.cli import main
out = {}
for argv in (["run", "--help"], ["run", "--drafter", "echo", "--copies", "9", "--target", "nowhere"],
             ["run", "--drafter", "echo", "--target", "nowhere"]):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            main(argv)
        except SystemExit:
            pass
    out[argv[1] + str(len(argv))] = " ".join((o.getvalue() + e.getvalue()).replace("\u2502", " ").split())
import gammatune_tui.engine.drafting as drafting
drafting.__path__.append(sys.argv[3])                   # the one file
import torch
sys.path.insert(0, sys.argv[4])
from tiny_models import emitted, greedy_ref, target_only_pair
from gammatune_tui.engine import PolicySettings, SpeculativeDecoder
pair = target_only_pair("echo", name="t")
ids = pair.encode_prompt("aaaa bbbb aaaa", raw=True)
dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), drafter="echo")
evs = list(dec.generate(ids, max_new_tokens=24))
out["decoder"] = [emitted(evs) == greedy_ref(pair, ids, 24), evs[0].drafter, evs[0].drafter_params,
                  sum(len(e.drafted) for e in evs[1:-1])]
print(json.dumps(out))
'''


def test_a_new_source_is_one_file_and_one_row(tmp_path):
    (tmp_path / "echo_source.py").write_text(ECHO)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(PKG / "engine/common/names.py"), ROW, str(tmp_path),
                           str(ROOT / "tests")], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "echo repeat the last token" in out["--help2"] and "--copies" in out["--help2"]
    assert "--copies must be a whole number in [1, 8], got 9" in out["--drafter7"]
    assert "drafter" not in out["--drafter5"] and "nowhere" in out["--drafter5"]   # accepted: the target is what fails
    same, drafter, params, drafted = out["decoder"]
    assert same and drafter == "echo" and params == {"copies": 2} and drafted > 0


# identifiers and string literals that name one source; where each may appear (besides the tests)
NAMED: dict[str, tuple[set[str], set[str], tuple[str, ...]]] = {
    "prompt lookup": (
        {"PROMPT_LOOKUP", "LookupTrace", "PromptLookupSource", "model_free", "LookupKind", "play_lookup",
         "record_lookup_trace", "session_lookup_trace", "repropose"},
        {"prompt-lookup"},
        ("engine/drafting/prompt_lookup.py", "bench/sim/lookup_trace.py", "engine/common/names.py",
         # the trace kinds' registry: one import and one row per kind
         "bench/sim/trace_kinds.py",
         # the family matrix's recorded columns (data: which paths were verified for each family)
         "engine/loading/families.py",
         # transformers' own prompt_lookup_num_tokens, refused with the name of its equivalent here
         "hf/settings.py"),
    ),
    "the n-gram pool": (
        {"NgramPoolSource", "PoolKind"},
        {"ngram-pool", "ngram_pool", "pool_trace"},
        ("engine/drafting/ngram_pool.py", "bench/sim/pool_trace.py", "engine/common/names.py", "bench/sim/trace_kinds.py"),
    ),
}


def _names_and_literals(tree: ast.AST) -> list[tuple[int, str]]:
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            found.append((n.lineno, n.id))
        elif isinstance(n, ast.Attribute):
            found.append((n.lineno, n.attr))
        elif isinstance(n, ast.alias):
            found.append((n.lineno, n.asname or n.name.split(".")[-1]))
        elif isinstance(n, ast.ImportFrom) and n.module:
            found.append((n.lineno, n.module.split(".")[-1]))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings:
            found.append((n.lineno, n.value))
    return found


def test_the_docs_table_is_the_rows():
    from gammatune_tui.engine.common.names import sources_table

    text = (ROOT / "docs/engine.md").read_text(encoding="utf-8")
    block = text.split("<!-- draft sources: generated from engine/common/names.py SOURCES -->\n")[1]
    assert block.split("<!-- end of draft sources -->")[0].strip() == sources_table()


def test_no_code_outside_a_sources_own_files_names_it():
    where: dict[str, list[str]] = {who: [] for who in NAMED}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        for line, text in _names_and_literals(ast.parse(path.read_text(encoding="utf-8"))):
            for who, (idents, words, own) in NAMED.items():
                if rel not in own and (text in idents or any(re.search(rf"(?<![\w-]){w}(?![\w-])", text)
                                                             for w in words)):
                    where[who].append(f"{rel}:{line} {text[:60]!r}")
    assert where == {who: [] for who in NAMED}
