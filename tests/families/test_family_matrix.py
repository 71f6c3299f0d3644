"""The family matrix (family_matrix.py beside this file): what docs/models.md and `gammatune models --families` say is
what the code does.

Every family of engine/loading/families.py is built once (a tiny random model)
and decoded on every path; the test fails when a family's recorded cell —
exact, or refused/differs/error with its reason — is not what happens now, so
a change that fixes or breaks a family comes with the regenerated table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gammatune_tui.engine.loading import families as fam

import family_matrix  # tests/families/family_matrix.py, the runner that regenerates the matrix

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "python tests/families/family_matrix.py"


@pytest.fixture(scope="module")
def recorded():
    return json.loads(fam.SUPPORT_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def found(recorded):
    import transformers

    if transformers.__version__ != recorded["transformers"]:
        pytest.skip(f"the matrix was recorded with transformers {recorded['transformers']}, "
                    f"this is {transformers.__version__}")
    return family_matrix.run_matrix()


def test_the_recorded_matrix_is_what_the_code_does(found, recorded):
    assert found["paths"] == recorded["paths"] == list(fam.PATHS)
    changed = {name: (recorded["families"].get(name), cells) for name, cells in found["families"].items()
               if recorded["families"].get(name) != cells}
    assert not changed, f"the family matrix changed; run `{REGENERATE}` and commit the result:\n" + \
        "\n".join(f"{n}: recorded {a}\n{' ' * len(n)}  now      {b}" for n, (a, b) in changed.items())
    assert set(found["families"]) == set(recorded["families"])


def test_docs_models_md_shows_the_recorded_matrix(recorded):
    doc = family_matrix.DOC.read_text(encoding="utf-8")
    assert family_matrix.doc_with_table(doc, recorded) == doc, f"docs/models.md is stale: run `{REGENERATE}`"


def test_every_family_is_checked_and_every_attention_and_moe_family_is_exact(recorded):
    cells = recorded["families"]
    assert len([c for c in cells.values() if "skipped" not in c]) >= 40
    assert set(cells) == {f.name for f in fam.FAMILIES}
    for f in fam.FAMILIES:
        for path in fam.PATHS:
            v = cells[f.name].get(path, "skipped")
            assert v == "exact" or (v.split(":")[0] in ("refused", "differs", "error", "skipped", "n/a") and "\n" not in v)
            if f.kind in (fam.ATTENTION, fam.MOE) and not v.startswith("n/a"):   # n/a: a head it does not ship
                assert v == "exact", f"{f.name} on {path}: {v}"
    assert all(not c["mtp"].startswith("n/a") for n, c in cells.items() if n in ("qwen3_5_text", "deepseek_v3"))


def test_the_documented_command_runs_the_runner_this_test_imports():
    """docs/models.md and `gammatune models --families` tell a maintainer to run the file the test uses."""
    runner = Path(family_matrix.__file__).resolve()
    assert runner.parent == Path(__file__).resolve().parent
    command = f"python {runner.relative_to(ROOT).as_posix()}"
    assert command == REGENERATE
    assert command in (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert command.split()[1] in (ROOT / "gammatune_tui" / "commands" / "models.py").read_text(encoding="utf-8")
