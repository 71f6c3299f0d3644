"""Prompt sets: JSON Lines of {"id", "category", "turns": [str, ...]}.

Shipped sets live in demo_prompts/ (`code` for the demo pair, `specbench`
for real chat pairs); users pass their own file with --prompts (or `-`,
stdin, which the command reads and hands to `parse_prompt_set`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from .errors import PromptFileError, read_user_file
from .resources import demo_prompts_dir


@dataclass(frozen=True)
class Prompt:
    id: str
    category: str
    turns: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.turns[0]


def resolve_prompt_set(name_or_path: str) -> Path:
    """A shipped set by name (`code`, `specbench`) or a path to a .jsonl file."""
    p = Path(name_or_path)
    if p.suffix == ".jsonl" or p.exists():
        return p
    shipped = demo_prompts_dir() / f"{name_or_path}.jsonl"
    if shipped.exists():
        return shipped
    raise PromptFileError(f"no prompt file {name_or_path!r} (give a .jsonl path, or one of: code, specbench)")


def load_prompt_set(name_or_path: str) -> list[Prompt]:
    path = resolve_prompt_set(name_or_path)
    data = read_user_file(path, PromptFileError, str(path), "no such prompt file", "a prompt file")
    return parse_prompt_set(data, str(path), path.stem)


def parse_prompt_set(data: bytes, where: str, stem: str = "prompt") -> list[Prompt]:
    """A prompt set's bytes (a file, or stdin for `bench --prompts -`) → prompts; errors name `where` and the line."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PromptFileError(f"{where}: not a text file (line {line} is not UTF-8); a prompt set is JSON Lines "
                              '({"id", "category", "turns": [...]} per line)') from None
    if "\0" in raw:
        raise PromptFileError(f"{where}: not a text file (it holds NUL bytes); a prompt set is JSON Lines") from None
    prompts: list[Prompt] = []
    lines: dict[str, int] = {}   # id → its line: results, traces and shares are kept per prompt id
    for n, text in enumerate(raw.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            raise PromptFileError(f"{where}: line {n}: not valid JSON (a prompt set is JSON Lines; for one plain-text "
                                  "prompt use --prompt-file)") from None
        turns = obj.get("turns") if isinstance(obj, dict) else None
        if not (isinstance(turns, list) and turns and all(isinstance(t, str) and t for t in turns)):
            raise PromptFileError(f"{where}: line {n}: 'turns' must be a non-empty list of strings")
        pid = obj.get("id", f"{stem}-{n}")
        cat = obj.get("category", "")
        if not isinstance(cat, str):
            raise PromptFileError(f"{where}: line {n}: 'category' must be a string")
        if str(pid) in lines:   # a second prompt of the same id was played on the first one's trace, silently
            raise PromptFileError(f"{where}: line {n}: id {str(pid)!r} is already the id of line {lines[str(pid)]}; "
                                  "each prompt needs its own")
        lines[str(pid)] = n
        prompts.append(Prompt(str(pid), cat, tuple(turns)))
    if not prompts:
        raise PromptFileError(f"{where}: no prompts in this file")
    return prompts


def seeded_demo_prompt(seed: int | None) -> Prompt:
    """The demo prompt a seed picks: the same one for the same seed, so a run without a prompt is reproducible."""
    prompts = load_prompt_set("code")
    return random.Random(seed).choice(prompts)
