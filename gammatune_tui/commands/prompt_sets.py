"""The prompts `bench` runs: a shipped set, a JSON Lines file, JSON Lines on stdin, or one prompt from a file.

`bench --prompts -` reads a prompt set from stdin and `bench --prompt-file
FILE` (or `-`) runs one plain-text prompt; a piped stdin is read only when
asked for with `-`: bench is the command scripts
and CI run unattended, where stdin is often a pipe that nobody writes to, and
a benchmark waiting forever on it would be worse than a flag to type.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidParameter
from ..prompts import Prompt, load_prompt_set, parse_prompt_set
from .prompt_input import STDIN, given_prompt, read_stdin

PROMPT_FILE_SET = "prompt-file"


def bench_prompts(prompts: str | None, prompt_file: Path | None, default: str) -> tuple[str, list[Prompt]]:
    """(the set's name as reports show it, its prompts)."""
    if prompts is not None and prompt_file is not None:
        raise InvalidParameter("give --prompts (a set) or --prompt-file (one prompt), not both")
    if prompt_file is not None:
        text = given_prompt(None, prompt_file)
        assert text is not None   # a --prompt-file is read or refused, never absent
        name = "stdin" if str(prompt_file) == STDIN else Path(prompt_file).name
        return PROMPT_FILE_SET, [Prompt(name, "", (text,))]
    if prompts == STDIN:
        text = read_stdin()
        return "stdin", parse_prompt_set(text.encode("utf-8"), "stdin (--prompts -)", "stdin")
    name = prompts or default
    return name, load_prompt_set(name)
