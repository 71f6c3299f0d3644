"""`gammatune models --families`: which model families decode exactly, which are refused and why — from the
family matrix's record, the same one docs/models.md shows."""

from __future__ import annotations

import json

from gammatune_tui.engine.loading import families as fam
from clihelpers import invoke


def test_families_lists_every_checked_family_with_its_verdict(capsys):
    code, out, err = invoke(["models", "--families", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    rows = {r["family"]: r for r in data["families"]}
    assert set(rows) == {f.name for f in fam.FAMILIES} and len(rows) >= 40
    recorded = fam.support()["families"]
    for name, r in rows.items():
        cells = recorded[name]
        assert r["not_exact"] == {p: cells[p] for p in fam.PATHS if cells[p] != "exact" and not cells[p].startswith("n/a")}
        assert r["verdict"] == ("exact" if not r["not_exact"] else r["verdict"])
    assert rows["llama"]["verdict"] == rows["mixtral"]["verdict"] == "exact"
    refused = [r for r in rows.values() if r["verdict"] == "refused"]
    assert refused and all(len(set(r["not_exact"].values())) == 1 for r in refused)   # one line, every path
    heads = {n for n, c in recorded.items() if c.get("mtp") == "exact"}
    assert {"qwen3_5_text", "deepseek_v3", "qwen3_next"} <= heads   # the mtp column: heads decode exactly
    assert recorded["llama"]["mtp"].startswith("n/a") and rows["llama"]["verdict"] == "exact"


def test_the_table_names_each_family_and_why_a_path_is_not_exact(capsys):
    code, out, err = invoke(["models", "--families"], capsys)
    assert code == 0, err
    for f in fam.FAMILIES:
        assert f.name in out
    for name, cells in fam.support()["families"].items():
        for path in fam.PATHS:
            if cells[path] != "exact" and not cells[path].startswith("n/a"):   # n/a: a head the family does not ship
                assert f"{name}: {cells[path].split(':')[0]}" in out
    code, out, err = invoke(["models"], capsys)
    assert code == 0 and "model families:" in out and "exact" in out and "--families" in out
