"""The code of "In your own code" runs as written (so it cannot rot), on 5.17 and the current transformers.

The README's five lines must stream the demo pair's greedy answer and return
exactly what `target.generate(..., do_sample=False)` returns; the examples
after them in the user guide (events, prompt lookup, a pipeline) must run.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "user-guide.md"


def section_code(path: Path = README) -> list[str]:
    text = path.read_text(encoding="utf-8")
    section = text.split("## In your own code", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_five_lines_stream_generates_greedy_answer(capsys):
    blocks = section_code()
    five = blocks[0].strip().splitlines()
    assert len(five) == 5
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)
    printed = capsys.readouterr().out
    tok, target, out = ns["tok"], ns["target"], ns["out"]
    want = target.generate(**tok("def fibonacci(n):", return_tensors="pt"), max_new_tokens=64, do_sample=False)
    assert torch.equal(out, want)
    assert printed == tok.decode(want[0], skip_special_tokens=True) + "\n"   # streamed as it went, prompt first

    guide = section_code(GUIDE)
    assert guide[0] == blocks[0]   # the guide starts from the README's five lines
    exec(compile(guide[1], "user-guide.md", "exec"), ns)   # events, prompt lookup, a pipeline
    printed = capsys.readouterr().out
    events = ns["events"]
    assert events[0].type == "header" and events[0].gamma0 == 6 and events[-1].type == "summary"
    assert printed.split()[0].replace(".", "", 1).isdigit()
