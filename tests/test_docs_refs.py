"""References resolve inside the repository: every "spec.md §n" names a section of docs/spec.md, and nothing
cites the SPEC or DESIGN files that live outside it; package code carries no "issue N" tags (comments say why)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "spec.md"
SUFFIXES = {".py", ".md", ".tcss", ".toml"}


def _files(*dirs: str) -> list[Path]:
    out = []
    for d in dirs:
        p = ROOT / d
        out += [p] if p.is_file() else [f for f in p.rglob("*") if f.suffix in SUFFIXES and f.is_file()]
    return [f for f in out if f.resolve() != Path(__file__).resolve()]


def _spec_sections() -> set[str]:
    """The numbers of docs/spec.md's headings: '1', '1.3', '2.6', …"""
    heads = re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", SPEC.read_text(encoding="utf-8"), flags=re.M)
    return set(heads)


def _hits(pattern: str, files: list[Path], flags: int = 0) -> list[tuple[str, int, str]]:
    rx = re.compile(pattern, flags)
    hits = []
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
            for m in rx.finditer(line):
                hits.append((f"{f.relative_to(ROOT)}:{n}", m.start(), m.group(0)))
    return hits


EVERYWHERE = ("gammatune_tui", "tests", "benchmarks", "docs", "README.md", "Makefile", "pyproject.toml")


def test_the_spec_has_the_numbered_sections_the_code_cites():
    assert {"1", "1.3", "2", "3", "4", "5"} <= _spec_sections()


def test_every_spec_citation_names_a_section_of_docs_spec_md():
    sections = _spec_sections()
    bad = [f"{where}: {text}" for where, _, text in _hits(r"spec\.md §(\d+(?:\.\d+)*)", _files(*EVERYWHERE))
           if text.split("§")[1] not in sections]
    assert bad == [], "citations of sections docs/spec.md does not have:\n" + "\n".join(bad)


def test_nothing_cites_the_spec_or_design_files_outside_the_repository():
    files = [f for f in _files(*EVERYWHERE) if f.name != "Makefile"] + [ROOT / "Makefile"]
    bad = [f"{where}: {text}" for where, _, text in _hits(r"\b(?:SPEC|DESIGN)\b", files)]
    assert bad == [], ("references that do not resolve inside the repository (cite docs/spec.md §n or "
                       "docs/architecture.md instead):\n" + "\n".join(bad))


def test_package_code_carries_no_issue_tags():
    bad = [f"{where}: {text}" for where, _, text in _hits(r"\bissues? #?\d+", _files("gammatune_tui"), re.I)]
    assert bad == [], "comments say why, not which issue:\n" + "\n".join(bad)
