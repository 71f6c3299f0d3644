"""The shipped prompt sets parse, have the promised categories, and say what they should."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from gammatune_tui.prompts import load_prompt_set, resolve_prompt_set

SPECBENCH_CATEGORIES = {
    "writing", "roleplay", "reasoning", "math", "coding", "extraction",
    "stem", "humanities", "translation", "summarization", "qa",
}
FIGURE_2B = "Translate German to English: Pfandhäuser boomen in Singapur, da die Krise in der Mittelschicht angekommen ist"


@pytest.mark.parametrize("name", ["code", "specbench"])
def test_every_line_is_one_well_formed_object(name):
    lines = [ln for ln in resolve_prompt_set(name).read_text(encoding="utf-8").splitlines() if ln.strip()]
    objs = [json.loads(ln) for ln in lines]
    for obj in objs:
        assert set(obj) == {"id", "category", "turns"}
        assert isinstance(obj["id"], str) and obj["id"]
        assert isinstance(obj["category"], str) and obj["category"]
        assert obj["turns"] and all(isinstance(t, str) and t.strip() for t in obj["turns"])
    ids = [o["id"] for o in objs]
    assert len(ids) == len(set(ids)), "prompt ids must be unique"
    assert len(load_prompt_set(name)) == len(objs)


@pytest.mark.parametrize("name", ["code", "specbench"])
def test_every_category_has_at_least_three_prompts(name):
    counts = Counter(p.category for p in load_prompt_set(name))
    assert counts and min(counts.values()) >= 3, counts


def test_code_set_is_big_enough_and_covers_the_kinds_of_code():
    prompts = load_prompt_set("code")
    assert len(prompts) >= 16
    cats = {p.category for p in prompts}
    assert {"function", "class", "loop", "docstring", "import", "test"} <= cats
    # prefixes of code, not chat requests: the demo pair has no chat template
    for p in prompts:
        assert len(p.turns) == 1
        assert any(kw in p.text for kw in ("def ", "class ", "for ", "while ", "import ", '"""', "if ", "try:", "with ", "assert"))


def test_specbench_has_all_categories_and_the_papers_translation_prompt():
    prompts = load_prompt_set("specbench")
    assert {p.category for p in prompts} == SPECBENCH_CATEGORIES
    assert any(p.category == "translation" and p.text == FIGURE_2B for p in prompts)
    assert any(len(p.turns) > 1 for p in prompts), "some prompts are multi-turn, as in MT-bench"


def test_code_set_has_prompts_where_copying_pays():
    """edit (restate code with a change) and list (continue a run of alike lines): prompt lookup's showcase."""
    prompts = load_prompt_set("code")
    for cat in ("edit", "list"):
        mine = [p for p in prompts if p.category == cat]
        assert len(mine) >= 3
        # each has already written at least two of what it is asked to write again
        assert all(len(p.text) > 150 and p.text.count("\n") >= 4 for p in mine), cat
