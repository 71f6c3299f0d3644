"""The training text: the Python standard library's own source, present on every machine with Python.

Test suites are left out (they are mostly repetitive fixtures), and so are
site-packages (they differ between machines) and a few generated data tables
(codec tables, pydoc topics) that read nothing like code. Files are sorted and
split into train/validation by a hash of their relative path, so the split is
the same on every machine with the same Python.
"""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path

#: Directory names whose contents are never used (test suites and installed packages).
EXCLUDED_DIRS = frozenset({"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"})
#: Paths (relative to the stdlib root, as posix prefixes) that are generated data, not code.
EXCLUDED_PREFIXES = ("encodings/", "pydoc_data/", "ensurepip/_bundled/", "_sysconfigdata", "config-")
#: One file in this many (by path hash) goes to validation.
VAL_EVERY = 40


@dataclass(frozen=True)
class Corpus:
    train: list[str]
    val: list[str]
    files: int
    root: Path

    @property
    def train_bytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.train)

    @property
    def val_bytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.val)


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def source_files(root: Path | None = None) -> list[Path]:
    """Every .py file of the standard library except test suites, site-packages and data tables."""
    root = Path(root) if root is not None else stdlib_root()
    out = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if any(part in EXCLUDED_DIRS for part in rel.parts[:-1]):
            continue
        if rel.as_posix().startswith(EXCLUDED_PREFIXES):
            continue
        out.append(path)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def is_val(rel_path: str) -> bool:
    return int(hashlib.sha256(rel_path.encode()).hexdigest(), 16) % VAL_EVERY == 0


def load_corpus(root: Path | None = None, max_bytes: int | None = None) -> Corpus:
    """Read the files; `max_bytes` keeps the first files (sorted) up to that size, for quick runs."""
    root = Path(root) if root is not None else stdlib_root()
    train: list[str] = []
    val: list[str] = []
    total = 0
    n = 0
    for path in source_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text.strip():
            continue
        rel = path.relative_to(root).as_posix()
        (val if is_val(rel) else train).append(text)
        n += 1
        total += len(text.encode("utf-8"))
        if max_bytes is not None and total >= max_bytes:
            break
    if max_bytes is not None and not val and len(train) > 1:
        val.append(train.pop())  # a tiny slice still needs something to validate on
    return Corpus(train=train, val=val, files=n, root=root)
