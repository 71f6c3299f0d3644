"""GGUF files as model arguments: found, hashed once, and refused in one line when transformers cannot read them."""

from __future__ import annotations

import pytest

from gammatune_tui.engine.loading import gguf as gguf_mod
from gammatune_tui.engine.loading.model_files import locate
from gammatune_tui.errors import ModelLoadError


def _bogus_gguf(path):
    gguf = pytest.importorskip("gguf", reason="the gguf package is not installed")
    import numpy as np

    w = gguf.GGUFWriter(str(path), "nonsense-arch")
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_tensor("token_embd.weight", np.zeros((2, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_a_gguf_file_or_a_folder_holding_one_is_a_model(tmp_path):
    f = _bogus_gguf(tmp_path / "m.gguf")
    assert locate(str(f), "target").gguf == str(f)
    assert locate(str(tmp_path), "target").gguf == str(f)
    _bogus_gguf(tmp_path / "other.gguf")
    with pytest.raises(ModelLoadError, match="holds 2 GGUF files"):
        locate(str(tmp_path), "target")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        locate(str(tmp_path / "notes.txt"), "target")


def test_an_architecture_transformers_cannot_read_is_one_line(tmp_path):
    from gammatune_tui.engine.loading.models import load_pair

    f = _bogus_gguf(tmp_path / "m.gguf")
    with pytest.raises(ModelLoadError) as info:
        load_pair(str(f), drafter="prompt-lookup", device="cpu")
    msg = str(info.value)
    assert "transformers cannot read this GGUF file" in msg and "nonsense-arch" in msg and "\n" not in msg
    assert not any(gguf_mod.gguf_dir().glob("m-*"))   # nothing half-converted is left to be mistaken for a model


def test_the_hash_is_computed_once_per_file_version(tmp_path, monkeypatch):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 100)
    first = gguf_mod.file_hash(f)
    monkeypatch.setattr(gguf_mod.hashlib, "sha256", lambda: pytest.fail("hashed again"))
    assert gguf_mod.file_hash(f) == first
    monkeypatch.undo()
    f.write_bytes(b"GGUF" + b"\1" * 101)       # a new version of the file: a new hash, a new cache directory
    assert gguf_mod.file_hash(f) != first


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path, capsys):
    from gammatune_tui import cli

    f = _bogus_gguf(tmp_path / "m.gguf")
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "--target", str(f), "--drafter", "prompt-lookup", "-n", "4", "hi"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "nonsense-arch is not supported" in err


def test_an_unusable_cache_folder_is_said_before_converting(tmp_path, monkeypatch):
    """Issue 40 row 13: GAMMATUNE_CACHE_DIR at a file converted the GGUF for 24 s before saying so."""
    not_a_folder = tmp_path / "hostname"
    not_a_folder.write_text("x")
    monkeypatch.setenv("GAMMATUNE_CACHE_DIR", str(not_a_folder))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)

    def never() -> None:
        raise AssertionError("started converting before checking the cache folder")

    monkeypatch.setattr(gguf_mod, "need_gguf_package", never)
    with pytest.raises(ModelLoadError, match="GAMMATUNE_CACHE_DIR"):
        gguf_mod.convert(model)
