"""Fixtures for the UI tests; helpers live in uihelpers.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def export_dir(tmp_path):
    return tmp_path


@pytest.fixture(autouse=True)
def _no_user_themes(tmp_path, monkeypatch):
    """Tests see only the shipped themes (unless a test points GAMMATUNE_THEMES elsewhere)."""
    empty = tmp_path / "no-user-themes"
    empty.mkdir()   # an existing, empty folder: a missing one is now said as a notice
    monkeypatch.setenv("GAMMATUNE_THEMES", str(empty))


@pytest.fixture(autouse=True)
def _exports_in_tmp(tmp_path, monkeypatch):
    """F2/F3 in tests write under the test's tmp dir, never into the user's data dir."""
    monkeypatch.setenv("GAMMATUNE_EXPORT_DIR", str(tmp_path / "exports"))
