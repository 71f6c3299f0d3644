"""The embedded demo pair: a tiny target/draft pair trained on the Python standard library's source.

It ships inside the package so every command works offline on a machine with
no GPU. `train.py` is the recipe that made it; `measure.py` checks it. Where it
lives and whether it is complete is `resources.py`'s to say.
"""

from __future__ import annotations

from ..resources import demo_pair_dir

PAIR_DIR = demo_pair_dir()
TARGET_DIR = PAIR_DIR / "target"
DRAFT_DIR = PAIR_DIR / "draft"
