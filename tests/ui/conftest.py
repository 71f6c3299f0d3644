"""Fixtures for the UI tests; helpers live in uihelpers.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def export_dir(tmp_path):
    return tmp_path


@pytest.fixture(autouse=True)
def _no_user_themes(tmp_path, monkeypatch):
    """Tests see only the shipped themes (unless a test points GAMMATUNE_THEMES elsewhere)."""
    monkeypatch.setenv("GAMMATUNE_THEMES", str(tmp_path / "no-user-themes"))
