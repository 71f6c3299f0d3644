"""Damaged model folders: one line naming the file and the fault, exit status 2 (run and doctor); a damaged
GGUF conversion in gammatune's cache is converted again instead of failing on every start."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from clihelpers import assert_one_line, invoke
from gammatune_tui.engine.loading import gguf as gguf_mod


@pytest.fixture()
def damaged(tiny_pair_dirs, tmp_path):
    """A copy of the tiny target, for each test to damage."""
    t, d = tiny_pair_dirs
    copy = tmp_path / "target"
    shutil.copytree(t, copy)
    return copy, d


def _args(target, draft):
    return ["--target", str(target), "--draft", str(draft), "--device", "cpu", "--threads", "1"]


def _doctor(target, draft):
    return ["doctor", "--target", str(target), "--draft", str(draft), "--self-drafts", "none", "--limit", "1",
            "-n", "4", "--device", "cpu", "--threads", "1"]


def test_a_cut_short_safetensors_is_named(damaged, capsys):
    target, draft = damaged
    f = target / "model.safetensors"
    os.truncate(f, f.stat().st_size // 2)
    code, _, err = invoke(["run", "x", "-n", "2", *_args(target, draft)], capsys)
    assert_one_line(code, err, "model.safetensors", "cut short")
    code, _, err = invoke(_doctor(target, draft), capsys)
    assert_one_line(code, err, "model.safetensors", "cut short")


def test_a_vocab_size_that_does_not_match_the_weights_is_named(damaged, capsys):
    target, draft = damaged
    cfg = json.loads((target / "config.json").read_text())
    cfg["vocab_size"] += 10
    (target / "config.json").write_text(json.dumps(cfg))
    code, _, err = invoke(["run", "x", "-n", "2", *_args(target, draft)], capsys)
    assert_one_line(code, err, "config.json", "vocab_size")


def test_a_corrupt_pickle_is_named(damaged, capsys):
    target, draft = damaged
    (target / "model.safetensors").unlink()
    (target / "pytorch_model.bin").write_bytes(os.urandom(4000))
    code, _, err = invoke(["run", "x", "-n", "2", "--allow-pickle", *_args(target, draft)], capsys)
    assert_one_line(code, err, "pytorch_model.bin", "not a readable")
    code, _, err = invoke([*_doctor(target, draft), "--allow-pickle"], capsys)
    assert_one_line(code, err, "pytorch_model.bin", "not a readable")


def test_a_damaged_gguf_conversion_is_converted_again(tiny_pair_dirs, tmp_path, monkeypatch):
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "m.gguf"
    src.write_bytes(b"GGUF" + b"\0" * 64)
    out = gguf_mod.converted_path(src)
    shutil.copytree(tiny_pair_dirs[0], out)   # a finished conversion, as convert() leaves it
    (out / "gammatune-gguf.json").write_text(json.dumps({"format": gguf_mod.FORMAT}))
    assert gguf_mod.convert(src) == out       # whole: used as it is
    f = out / "model.safetensors"
    os.truncate(f, f.stat().st_size - 100)

    class Converting(Exception):
        pass

    def converting():
        raise Converting

    monkeypatch.setattr(gguf_mod, "need_gguf_package", converting)
    with pytest.raises(Converting):           # cut short: converted again, not loaded and failed on every start
        gguf_mod.convert(src)
