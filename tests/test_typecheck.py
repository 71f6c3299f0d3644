"""The type check of `make typecheck` catches what it is there for.

`PolicyParams` is made at run time from the `ParamSpec` rows, so mypy sees
its fields only through tools/mypy_params.py. If that plugin stopped
matching (a renamed class, a moved module), every field would read as Any and
a misspelt parameter would pass unseen: these tests check it still types a
field by its row and still reports a name no row declares. `make check` and
`make test` run the check itself over the package ([tool.mypy]) before pytest.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mypy", reason="mypy comes with the test extras (`make install`)")


def _mypy(tmp_path: Path, source: str) -> str:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(source)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(snippet)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    return done.stdout + done.stderr


def test_each_field_has_the_type_its_row_says(tmp_path):
    out = _mypy(tmp_path, (
        "from gammatune_tui.engine.policies.policy_params import PolicyParams\n"
        "p = PolicyParams.build(eta=0.5)\n"
        "reveal_type(p.eta)\n"
        "reveal_type(p.gamma_max)\n"
        "reveal_type(p.dynamic_tau)\n"
    ))
    revealed = dict(re.findall(r'snippet\.py:(\d): note: Revealed type is "(?:builtins\.)?([\w.]+)"', out))
    assert revealed == {"3": "fractions.Fraction", "4": "int", "5": "bool"}, out


def test_a_misspelt_parameter_or_a_wrong_use_is_an_error(tmp_path):
    out = _mypy(tmp_path, (
        "from gammatune_tui.engine.policies.policy_params import PolicyParams\n"
        "p = PolicyParams()\n"
        "x = p.gamma_mx\n"
        "name: str = p.gamma_max\n"
    ))
    assert 'snippet.py:3: error: "PolicyParams" has no parameter "gamma_mx"' in out, out
    assert "snippet.py:4: error: Incompatible types in assignment" in out, out
