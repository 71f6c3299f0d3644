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


def test_a_model_drafter_on_a_pair_without_a_draft_model_is_refused_before_loading(capsys, monkeypatch):
    from gammatune_tui.engine.loading import models
    from gammatune_tui.session import compare_job

    def no_load(*args, **kwargs):
        raise AssertionError("loaded models before refusing")

    monkeypatch.setattr(models, "load_pair", no_load)
    monkeypatch.setattr(models, "check_pair", no_load)   # not even the package's GGUF file is looked for
    monkeypatch.setattr(compare_job.CompareJob, "prepare", no_load)
    for drafters in ("model,prompt-lookup", "model"):
        code, out, err = invoke(["compare", "--print", "--pair", "smollm2", "--drafters", drafters, "hi"], capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert "--pair smollm2 has none" in err and "--draft" in err
