"""Models offline: an uncached hub id fails at once without the network, a directory that is not a model
says what is missing, and a hub id in the local cache loads without HF_HUB_OFFLINE."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gammatune_tui.cli import main
from gammatune_tui.engine.loading.models import download_command

REPO = Path(__file__).resolve().parents[2]

# Runs the CLI with every way of opening a connection replaced by an exit, so a test fails loudly if the
# network is asked at all (this machine has none; a user's laptop would wait on it).
NO_NETWORK = """
import socket, sys
def refuse(*a, **k):
    print("NETWORK ATTEMPT", a[:1], file=sys.stderr)
    raise SystemExit(99)
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from gammatune_tui.cli import main
main()
"""


def _cli_without_network(args, cache: Path, **env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HUB_CACHE=str(cache), HF_HOME=str(cache.parent / "hf-home"), OMP_NUM_THREADS="1", **env_extra)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", NO_NETWORK, *args], capture_output=True, text=True, env=env, cwd=REPO,
                       timeout=300)
    return r, time.monotonic() - t0


def _fake_cache(cache: Path, repo_id: str, source: Path) -> None:
    """A hub repo as huggingface_hub lays it out in its cache: refs/main → snapshots/<rev>/files."""
    root = cache / ("models--" + repo_id.replace("/", "--"))
    snap = root / "snapshots" / "0123abcd"
    shutil.copytree(source, snap)
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text("0123abcd")


def test_uncached_hub_ids_fail_at_once_without_the_network(tmp_path):
    r, secs = _cli_without_network(["run", "hi", "--target", "someone/big-target", "--draft", "someone/small-draft"],
                                   tmp_path / "hub")
    assert "NETWORK ATTEMPT" not in r.stderr
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "not in the local Hugging Face cache" in lines[0]
    assert "`hf download someone/big-target && hf download someone/small-draft`" in lines[0]
    assert "--download" in lines[0] and "huggingface-cli" not in lines[0]


def test_a_preset_not_downloaded_says_how_to_get_it(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "hi", "--pair", "qwen-7b"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert download_command(["Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"]) in err


def test_a_cached_hub_id_loads_without_hf_hub_offline(tmp_path, tiny_pair_dirs):
    cache = tmp_path / "hub"
    t, d = tiny_pair_dirs
    _fake_cache(cache, "test/tiny-target", t)
    _fake_cache(cache, "test/tiny-draft", d)
    r, _ = _cli_without_network(["run", "hi", "--target", "test/tiny-target", "--draft", "test/tiny-draft",
                                 "-n", "4", "--json", "--device", "cpu"], cache)
    assert "NETWORK ATTEMPT" not in r.stderr
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith('{"type": "summary"')


def test_download_with_hf_hub_offline_is_refused(capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SystemExit) as exc:
        main(["run", "hi", "--target", "a/b", "--draft", "c/d", "--download"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--download needs the network" in err


@pytest.mark.parametrize("files, missing", [
    ([], ["no config.json", "no weights (*.safetensors)", "no tokenizer"]),
    (["config.json"], ["no weights", "no tokenizer"]),
    (["config.json", "tokenizer.json", "pytorch_model.bin"], ["only pickle weights (*.bin): pass --allow-pickle"]),
])
def test_a_directory_that_is_not_a_model_says_what_is_missing(tmp_path, capsys, tiny_pair_dirs, files, missing):
    d = tmp_path / "notamodel"
    d.mkdir()
    for f in files:
        (d / f).write_text("{}")
    with pytest.raises(SystemExit) as exc:
        main(["run", "hi", "--target", str(d), "--draft", str(tiny_pair_dirs[1])])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exc.value.code == 2 and len(lines) == 1, err
    assert "is not a model directory" in lines[0]
    for m in missing:
        assert m in lines[0]


def test_models_lists_the_hf_download_command(capsys):
    with pytest.raises(SystemExit):
        main(["models"])
    out = " ".join(capsys.readouterr().out.split())
    assert "hf download" in out and "huggingface-cli" not in out
