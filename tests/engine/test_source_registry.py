"""Draft sources are plugins: a source is its own file plus one registry row, and nothing else names it.

Checks of what docs/architecture.md ("Adding a draft source") promises:

* a throw-away source, one file, one row in engine/common/names.py
  `SOURCES` and one line binding its class in engine/drafting/registry.py,
  is accepted by `--drafter`, listed by `--help`, and drafts in the decoder
  with the target's greedy output, with no other file edited; so does a
  throw-away source that reads the target's hidden rows (a head), in the
  same three files (at most 4, the goal of issue 41);
* every row's class is bound by import and is a `DraftSource`, with the
  interface the decoder drives;
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
ROW = ('    SourceSpec("echo", False, "repeat the last token", '
       '(ParamSpec("copies", int, 2, "copies", "tokens to propose", lo=1, hi=8),)),\n')

LENS = '''
"""A throw-away head for the test: drafts the law of the target's last kept row (after the final norm) through
the target's own LM head; it reads the target through the seam (runners/hidden.py)."""
import torch
from . import Draft, DraftSource
from ..runners import TargetReads


class LensSource(DraftSource):
    runner = None

    def __init__(self, model):
        self.model, self.rows = model, []
        self.reads = TargetReads(normed=True)

    @classmethod
    def create(cls, params, made):
        return cls(made.pair.target)

    def observe(self, rows):
        del self.rows[rows.start:]
        self.rows.extend(rows.hidden.unbind(0))

    def draft(self, ids, window, *, policy, served, gen, eos, device):
        out = Draft()
        if window <= 0 or not self.rows:
            return out
        with torch.inference_mode():
            probs = torch.softmax(self.model.lm_head(self.rows[-1][0]).float(), -1)
        x = int(probs.argmax())
        out.ids, out.top, out.chosen, out.entropy, out.calls = [x], [float(probs[x])], [float(probs[x])], [0.0], 1
        return out
'''
LENS_ROW = '    SourceSpec("lens", False, "the target\'s last row through its LM head"),\n'

PROBE = r'''
import contextlib, importlib.util, io, json, sys


def patched(module, path, *edits):
    """Load `module` from `path` with each (line, text) edit: `text` inserted at the start of the line `line`
    begins (the rows' and the registry's own lines, as a developer adds them)."""
    src = open(path).read()
    for before, add in edits:
        i = src.rindex("\n", 0, src.index(before)) + 1
        src = src[:i] + add + src[i:]
    spec = importlib.util.spec_from_loader(module, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = module.rpartition(".")[0]
    sys.modules[module] = mod
    exec(compile(src, path, "exec"), mod.__dict__)


args = json.loads(sys.argv[1])
import gammatune_tui.engine.common
patched("gammatune_tui.engine.common.names", args["names"], (")\nBY_SOURCE", "".join(args["rows"])))
import gammatune_tui.engine.drafting as drafting
drafting.__path__.append(args["files"])                   # the one file of each source
patched("gammatune_tui.engine.drafting.registry", args["registry"],
        ("\nCLASSES", "".join(f"from .{m} import {c}\n" for m, c in args["classes"].values())),
        ("\n}\nassert", "".join(f"    {n!r}: {c},\n" for n, (m, c) in args["classes"].items())))
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
import torch
sys.path.insert(0, args["tests"])
from tiny_models import emitted, greedy_ref, target_only_pair
from gammatune_tui.engine import PolicySettings, SpeculativeDecoder
for name in args["classes"]:
    pair = target_only_pair(name, name="t")
    ids = pair.encode_prompt("aaaa bbbb aaaa", raw=True)
    dec = SpeculativeDecoder(pair, PolicySettings.build("specdecode", 4), drafter=name)
    evs = list(dec.generate(ids, max_new_tokens=24))
    out[name] = [emitted(evs) == greedy_ref(pair, ids, 24), evs[0].drafter, evs[0].drafter_params,
                 sum(len(e.drafted) for e in evs[1:-1]), sum(e.accepted for e in evs[1:-1])]
print(json.dumps(out))
'''


def test_a_new_source_and_a_head_that_reads_the_target_are_one_file_one_row_and_one_line(tmp_path):
    (tmp_path / "echo_source.py").write_text(ECHO)
    (tmp_path / "lens_source.py").write_text(LENS)
    args = {"names": str(PKG / "engine/common/names.py"), "rows": [ROW, LENS_ROW], "files": str(tmp_path),
            "registry": str(PKG / "engine/drafting/registry.py"), "tests": str(ROOT / "tests"),
            "classes": {"echo": ("echo_source", "EchoSource"), "lens": ("lens_source", "LensSource")}}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "echo repeat the last token" in out["--help2"] and "--copies" in out["--help2"]
    assert "--copies must be a whole number in [1, 8], got 9" in out["--drafter7"]
    assert "drafter" not in out["--drafter5"] and "nowhere" in out["--drafter5"]   # accepted: the target is what fails
    same, drafter, params, drafted, _ = out["echo"]
    assert same and drafter == "echo" and params == {"copies": 2} and drafted > 0
    same, drafter, params, drafted, accepted = out["lens"]
    assert same and drafter == "lens" and params == {} and drafted > 0 and accepted > 0
    # (the head took its own file, names.py's row and registry.py's lines: 3 files, against issue 41's 4)


def test_every_row_is_bound_by_import_to_a_draft_source():
    import inspect

    from gammatune_tui.engine.common.names import SOURCES
    from gammatune_tui.engine.drafting import DraftSource
    from gammatune_tui.engine.drafting.registry import CLASSES

    assert [s.name for s in SOURCES] == list(CLASSES)
    for s in SOURCES:
        cls = CLASSES[s.name]
        assert issubclass(cls, DraftSource), s.name
        for method in ("create", "start", "draft", "observe"):
            want = inspect.signature(getattr(DraftSource, method)).parameters.keys()
            assert inspect.signature(getattr(cls, method)).parameters.keys() == want, (s.name, method)
    from gammatune_tui.engine.loading.families import PATHS

    # the family matrix's columns come from the rows: a source with a column is verified on every family
    assert [c for c in PATHS if c in {s.matrix_column for s in SOURCES}] == [s.matrix_column for s in SOURCES
                                                                           if s.matrix_column]
    src = (PKG / "engine/common/names.py").read_text() + (PKG / "engine/drafting/draft_sources.py").read_text()
    assert "importlib" not in src and ":Class" not in src


# identifiers and string literals that name one source; where each may appear (besides the tests)
NAMED: dict[str, tuple[set[str], set[str], tuple[str, ...]]] = {
    "prompt lookup": (
        {"PROMPT_LOOKUP", "LookupTrace", "PromptLookupSource", "model_free", "LookupKind", "play_lookup",
         "record_lookup_trace", "session_lookup_trace", "repropose"},
        {"prompt-lookup"},
        ("engine/drafting/prompt_lookup.py", "bench/sim/lookup_trace.py", "engine/common/names.py",
         "engine/drafting/registry.py",
         # the trace kinds' registry: one import and one row per kind
         "bench/sim/trace_kinds.py",
         # transformers' own prompt_lookup_num_tokens, refused with the name of its equivalent here
         "hf/settings.py"),
    ),
    "the n-gram pool": (
        {"NgramPoolSource", "PoolKind"},
        {"ngram-pool", "ngram_pool", "pool_trace"},
        ("engine/drafting/ngram_pool.py", "bench/sim/pool_trace.py", "engine/common/names.py",
         "engine/drafting/registry.py", "bench/sim/trace_kinds.py"),
    ),
    # issue 45: a head read from its own folder in at most 4 files (its two, its row, its registry line)
    "the EAGLE-3 head": (
        {"Eagle3Source", "Eagle3Head", "HeadSpec", "check_head", "read_spec", "is_eagle3_config"},
        {"eagle3", "eagle3_head", "LlamaForCausalLMEagle3"},
        ("engine/drafting/eagle3.py", "engine/drafting/eagle3_head.py", "engine/common/names.py",
         "engine/drafting/registry.py"),
    ),
    # issue 45: a block drafter in 3 files (its own, its row, its registry line)
    "the DFlash drafter": (
        {"DFlashSource", "check_drafter", "drafter_of"},
        {"dflash", "dflash_head", "muse_glimmer_assistant", "DFLASH", "draft-dflash"},
        ("engine/drafting/dflash.py", "engine/common/names.py", "engine/drafting/registry.py"),
    ),
    # issue 45: a head over the target's keys and values in 3 files (its own, its row, its registry line)
    "the Gemma 4 assistant": (
        {"Gemma4AssistantSource", "assistant_of", "check_assistant", "store_layers"},
        {"gemma4-assistant", "assistant_head", "gemma4_assistant", "gemma4_unified_assistant", "FROZEN_KV_MTP"},
        ("engine/drafting/gemma4_assistant.py", "engine/common/names.py", "engine/drafting/registry.py"),
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

    text = (ROOT / "docs/drafting.md").read_text(encoding="utf-8")
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
