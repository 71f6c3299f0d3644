"""The CLI tests' fixtures: the tiny pair's directories as command-line arguments."""

from __future__ import annotations

import pytest


@pytest.fixture()
def pair_args(tiny_pair_dirs):
    t, d = tiny_pair_dirs
    return ["--target", str(t), "--draft", str(d), "--device", "cpu", "--threads", "1"]
