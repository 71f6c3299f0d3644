"""The README's "Use GammaTune in your own code" runs as written (so it cannot rot), on 5.17 and the current transformers.

The five lines must stream the demo pair's greedy answer and return exactly
what `target.generate(..., do_sample=False)` returns; the examples after them
(events, prompt lookup, a pipeline) must run.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[2] / "README.md"


def section_code() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Use GammaTune in your own code", 1)[1].split("\n## ", 1)[0]
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

    exec(compile(blocks[1], "README.md", "exec"), ns)   # events, prompt lookup, a pipeline
    printed = capsys.readouterr().out
    events = ns["events"]
    assert events[0].type == "header" and events[0].gamma0 == 6 and events[-1].type == "summary"
    assert printed.split()[0].replace(".", "", 1).isdigit()
