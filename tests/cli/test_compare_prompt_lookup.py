"""`compare --drafter prompt-lookup`: the target-only reference row runs on a pair that has no draft model."""

from __future__ import annotations

from clihelpers import invoke


def test_compare_with_prompt_lookup_alone_prints_its_ranking(capsys, tiny_pair_dirs):
    t = str(tiny_pair_dirs[0])
    code, out, err = invoke(["compare", "--print", "--target", t, "--device", "cpu", "--threads", "1",
                             "--drafter", "prompt-lookup", "-M", "specdecode,gammatune", "-n", "10", "-t", "0",
                             "--raw", "def f(x):"], capsys)
    assert code == 0, err
    assert "Traceback" not in err and "NoneType" not in err
    assert "target-only" in out
    assert "lossless: every method produced the target's own tokens" in out


def test_compare_demo_target_with_prompt_lookup(capsys):
    code, out, err = invoke(["compare", "--print", "--drafter", "prompt-lookup", "-M", "specdecode,gammatune+", "-n", "8",
                             "-t", "0", "def f(x):"], capsys)
    assert code == 0, err
    assert "target-only" in out
