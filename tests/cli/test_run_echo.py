"""`run --echo`: the README's `run "def quicksort(items):" -t 0 --echo > quicksort.py` (issue 40, row 12h).

In a pipe `run` writes the continuation alone, so the README's example used
to write a file that began in the middle of a function. With --echo the
file starts with the prompt it continues.
"""

from __future__ import annotations

from pathlib import Path

from clihelpers import assert_one_line, invoke

REPO = Path(__file__).resolve().parents[2]
PROMPT = "def quicksort(items):"


def test_echo_writes_the_prompt_before_the_text_in_a_pipe(capsys):
    code, out, err = invoke(["run", PROMPT, "-t", "0", "-n", "12", "--echo"], capsys)
    assert code in (0, None), err
    assert out.startswith(PROMPT) and len(out) > len(PROMPT)
    code, plain, err = invoke(["run", PROMPT, "-t", "0", "-n", "12"], capsys)
    assert not plain.startswith(PROMPT)
    assert out == PROMPT + plain   # the same continuation, the prompt before it


def test_the_readme_example_uses_echo():
    line = next(ln for ln in (REPO / "README.md").read_text().splitlines() if "> quicksort.py" in ln)
    assert "--echo" in line


def test_echo_with_json_is_refused(capsys):
    code, _, err = invoke(["run", PROMPT, "--json", "--echo"], capsys)
    assert_one_line(code, err, "--echo", "--json")
