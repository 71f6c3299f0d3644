"""`doctor` given draft sources without a draft model (an MTP or EAGLE-3 head, prompt lookup): measured from their
own traces under greedy decoding, as `bench --simulate` replays them, ranked beside the draft models; refused
rows only where they cannot be measured (sampled decoding, a target without an MTP head), never a traceback
(`doctor --draft mtp` once ended in an AttributeError on `pair.draft.parameters()`, and `--draft prompt-lookup`
was looked up as a model in the hub cache)."""

from __future__ import annotations

import re

import json

import pytest

from clihelpers import assert_one_line, invoke
from test_eagle3_cli import heads  # noqa: F401  (the fixture)
from tiny_mtp import runs_heads, write_mtp_checkpoint


def _rows(path) -> dict:
    return {d["label"]: d for d in json.loads(path.read_text())["drafts"]}


def test_heads_and_prompt_lookup_are_measured_beside_the_draft_models(capsys, tiny_pair_dirs, heads, tmp_path):
    target = str(tiny_pair_dirs[0])
    out_json = tmp_path / "doctor.json"
    code, out, err = invoke(["doctor", "--target", target, "--draft", "mtp", "--draft", "prompt-lookup",
                             "--draft", str(heads["safeailab"]), "--self-drafts", "self:int8", "-n", "12", "--limit", "1",
                             "--device", "cpu", "--threads", "1", "--json", str(out_json)], capsys)
    assert code == 0, err
    assert "Traceback" not in out + err and "not in the local Hugging Face cache" not in out
    rows = _rows(out_json)
    assert rows["prompt-lookup"]["status"] == "examined" and rows["self:int8"]["status"] == "examined"
    head = next(r for r in rows.values() if r["path"] == str(heads["safeailab"]))
    assert head["status"] == "examined" and head["predicted"] > 0
    assert rows["mtp"]["status"] == "refused" and "MTP" in rows["mtp"]["reason"]   # this llama has no head


@pytest.mark.skipif(not runs_heads(), reason="this transformers' MtpModel runs no head layer alone")
def test_an_mtp_head_is_ranked_with_its_acceptance(capsys, tmp_path):
    write_mtp_checkpoint("mellum", tmp_path / "m", seed=3)
    out_json = tmp_path / "doctor.json"
    code, out, err = invoke(["doctor", "--target", str(tmp_path / "m"), "--drafters", "mtp,self:int8", "-n", "16",
                             "--limit", "1", "--device", "cpu", "--threads", "1", "--json", str(out_json)], capsys)
    assert code == 0, err
    rows = _rows(out_json)
    assert rows["mtp"]["status"] == "examined" and rows["mtp"]["methods"]
    assert "mtp" in out.split("Drafts ranked")[1].split("α:")[0]   # a ranked row, not a refusal
    # where the head's step goes (issue 41): its layer and its projection, timed apart, beside the target's pass
    assert re.search(r"a drafting step: the head's layer [\d.]+ ms \(\d+%\), its projection over 260 tokens "
                     r"[\d.]+ ms \(\d+%\); the target's one-token pass [\d.]+ ms", out)
    assert set(rows["mtp"]["step_ms"]) == {"the head's layer", "its projection over 260 tokens"}


def test_sampled_sources_without_a_model_are_refused_rows_that_say_where_to_race_them(capsys, tiny_pair_dirs):
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--drafters", "prompt-lookup,self:int8",
                             "-t", "0.7", "-n", "12", "--limit", "1", "--device", "cpu", "--threads", "1"], capsys)
    assert code == 0, err
    assert "prompt-lookup drafts without a draft model; measure it at -t 0, or race it live: gammatune compare" in out
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--draft", "prompt-lookup",
                             "--self-drafts", "none", "-t", "0.7", "-n", "12", "--limit", "1", "--device", "cpu"],
                            capsys)
    assert_one_line(code, err, "no candidate draft can be used", "prompt-lookup drafts without a draft model")


def test_drafters_names_the_candidates_as_compare_does(capsys, tiny_pair_dirs):
    """The issue's command, `doctor --target T --drafters mtp,self:int4,prompt-lookup`: the self-draft and prompt
    lookup measured, mtp a refused row on a target without a head; self:int8 (a --self-drafts default) not examined."""
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--drafters", "mtp,self:int4,prompt-lookup",
                             "-n", "12", "--limit", "1", "--device", "cpu", "--threads", "1"], capsys)
    assert code == 0, err
    assert "self:int4" in out and "self:int8" not in out and "prompt-lookup: refused" not in out
    assert "mtp: refused" in out


def test_bad_drafters_are_one_line(capsys, tiny_pair_dirs):
    t = str(tiny_pair_dirs[0])
    for argv, words in ((["--drafters", "nonsense"], "unknown drafter 'nonsense'"),
                        (["--drafters", "model"], "--drafters model examines the --draft models"),
                        (["--drafters", "self:int4", "--self-drafts", "self:int8"], "not also in --self-drafts")):
        code, out, err = invoke(["doctor", "--target", t, *argv, "-n", "12", "--limit", "1"], capsys)
        assert_one_line(code, err, words)
