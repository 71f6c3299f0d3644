"""`doctor` given a draft source without a draft model (an MTP or EAGLE-3 head, prompt lookup): a refused row that
says where the source is measured, never a traceback (`doctor --draft mtp` ended in an AttributeError on
`pair.draft.parameters()`, and `--draft prompt-lookup` was looked up as a model in the hub cache)."""

from __future__ import annotations

from clihelpers import assert_one_line, invoke
from test_eagle3_cli import heads  # noqa: F401  (the fixture)


def test_sources_without_a_model_are_refused_rows_beside_the_measured_drafts(capsys, tiny_pair_dirs, heads):
    target = str(tiny_pair_dirs[0])
    code, out, err = invoke(["doctor", "--target", target, "--draft", "mtp", "--draft", "prompt-lookup",
                             "--draft", str(heads["safeailab"]), "--self-drafts", "self:int8", "-n", "12", "--limit", "1",
                             "--device", "cpu", "--threads", "1"], capsys)
    assert code == 0, err
    assert "Traceback" not in out + err
    for name in ("mtp", "prompt-lookup", "eagle3"):
        assert f"{name} drafts without a draft model; race it live instead: gammatune compare" in out
    assert "not in the local Hugging Face cache" not in out
    assert "self:int8" in out


def test_only_sources_without_a_model_is_one_line(capsys, tiny_pair_dirs):
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--draft", "mtp", "--self-drafts", "none",
                             "-n", "12", "--limit", "1", "--device", "cpu"], capsys)
    assert_one_line(code, err, "no candidate draft can be used", "mtp drafts without a draft model")


def test_drafters_names_the_candidates_as_compare_does(capsys, tiny_pair_dirs):
    """The issue's command, `doctor --target T --drafters mtp,self:int4,prompt-lookup`: the self-draft measured,
    the two sources without a draft model refused rows; self:int8 (a --self-drafts default) not examined."""
    code, out, err = invoke(["doctor", "--target", str(tiny_pair_dirs[0]), "--drafters", "mtp,self:int4,prompt-lookup",
                             "-n", "12", "--limit", "1", "--device", "cpu", "--threads", "1"], capsys)
    assert code == 0, err
    assert "self:int4" in out and "self:int8" not in out
    assert "mtp drafts without a draft model" in out and "prompt-lookup drafts without a draft model" in out


def test_bad_drafters_are_one_line(capsys, tiny_pair_dirs):
    t = str(tiny_pair_dirs[0])
    for argv, words in ((["--drafters", "nonsense"], "unknown drafter 'nonsense'"),
                        (["--drafters", "model"], "--drafters model examines the --draft models"),
                        (["--drafters", "self:int4", "--self-drafts", "self:int8"], "not also in --self-drafts")):
        code, out, err = invoke(["doctor", "--target", t, *argv, "-n", "12", "--limit", "1"], capsys)
        assert_one_line(code, err, words)
