"""A head's folder, read the one way every head reads it: its config.json, or one line saying what is wrong.

EAGLE-3, DFlash and the Gemma 4 assistant each ship as a folder of their own
beside the target. Each refuses a folder without a config.json, or with one
that is not JSON, in the same words and before any weights load; each then
checks its own fields against the target's language model (target_fields:
a multimodal target's text_config), and where the target's config is not on
disk yet, its own fields alone (check_folder). Kept here so the three say it
alike and no source file repeats the reading.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ...errors import InvalidParameter


def head_config(folder: str | Path, what: str, hint: str) -> tuple[Path, dict[str, Any]]:
    """(the folder, its config.json as a dict), or one line `{what} {folder}: …`; `hint` says which folder to give
    when there is no config.json (e.g. "the folder an EAGLE-3 head was downloaded to")."""
    root = Path(folder).expanduser()
    try:
        cfg = json.loads((root / "config.json").read_text())
    except FileNotFoundError:
        raise InvalidParameter(f"{what} {root}: no config.json there (give {hint})") from None
    except (OSError, ValueError) as e:
        raise InvalidParameter(f"{what} {root}: config.json is unreadable ({e})") from None
    return root, cfg if isinstance(cfg, dict) else {}


def head_folder(params: dict[str, Any], key: str, source: str, what: str) -> str:
    """The folder a source's parameter `key` names, or one line: `drafter 'eagle3' needs its head's folder:
    --draft eagle3:PATH` (`what`: "its head's folder")."""
    path = str(params.get(key) or "")
    if not path:
        raise InvalidParameter(f"drafter {source!r} needs {what}: --draft {source}:PATH")
    return path


def target_fields(target_cfg: Any) -> Callable[..., Any]:
    """`get(field, default=None)` over the target's config, a dict (its config.json, before weights load) or a
    PretrainedConfig, reading a multimodal target's text_config: a head drafts for the language model."""
    def getter(cfg: Any) -> Callable[..., Any]:
        return cfg.get if isinstance(cfg, dict) else (lambda k, d=None: getattr(cfg, k, d))

    text = getter(target_cfg)("text_config")
    return getter(target_cfg if text is None else text)


def check_folder(path: str, target_cfg: Any, alone: Callable[[str], Any], against: Callable[[str, Any], Any]) -> None:
    """A source's `check_files`: the folder against the target's config (`against`), or where that config is not
    on disk yet (a hub id still to fetch) the folder's own checks (`alone`), one line either way."""
    if target_cfg is None:
        alone(path)
    else:
        against(path, target_cfg)


__all__ = ["check_folder", "head_config", "head_folder", "target_fields"]
