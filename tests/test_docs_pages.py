"""The docs stay readable and whole: every page under its cap, the newcomer's path (README → architecture → spec)
short enough to read in ten minutes, no newcomer page sending a reader into the history, and every relative link —
file and #anchor — landing somewhere (a page split or a renamed heading breaks a link silently otherwise)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# The newcomer's path, read in order, and its budget in lines (about ten minutes of reading).
NEWCOMER_PATH = ("README.md", "docs/architecture.md", "docs/spec.md")
NEWCOMER_LINES = 820
# Every page's cap; a page that outgrows it splits by topic (as engine.md did into its rooms' pages).
DEFAULT_CAP = 450
CAPS = {
    "README.md": 200,
    "docs/benchmarks.md": 600,
    "docs/policies.md": 620,
    "docs/user-guide.md": 760,
}
# The past is kept, outside every cap, where no newcomer page links.
HISTORY = "docs/history/"


def _pages() -> list[Path]:
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _lines(p: Path) -> int:
    return len(p.read_text(encoding="utf-8").splitlines())


def test_every_page_is_under_its_cap():
    over = [f"{_rel(p)}: {_lines(p)} lines (cap {CAPS.get(_rel(p), DEFAULT_CAP)})" for p in _pages()
            if not _rel(p).startswith(HISTORY) and _lines(p) > CAPS.get(_rel(p), DEFAULT_CAP)]
    assert over == [], "pages over their cap; split them by topic:\n" + "\n".join(over)


def test_the_newcomer_path_reads_in_ten_minutes():
    total = sum(_lines(ROOT / p) for p in NEWCOMER_PATH)
    assert total <= NEWCOMER_LINES, f"README → architecture → spec is {total} lines (budget {NEWCOMER_LINES})"


def test_no_newcomer_page_links_the_history():
    bad = [p for p in NEWCOMER_PATH if "history/" in (ROOT / p).read_text(encoding="utf-8")]
    assert bad == [], f"the history is for maintainers, not the newcomer's path: {bad}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_lands():
    bad = []
    for page in _pages():
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):          # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{_rel(page)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{_rel(page)}: {target} (no such heading)")
    assert bad == [], "links that land nowhere:\n" + "\n".join(bad)


def test_every_docs_page_named_in_the_code_exists():
    named = set()
    for f in list((ROOT / "gammatune_tui").rglob("*.py")) + list((ROOT / "benchmarks").rglob("*.py")):
        named |= {m.group(0) for m in re.finditer(r"(?<![\w/.])docs/(?:history/)?[\w.-]+\.md", f.read_text(encoding="utf-8"))}
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert missing == [], f"the code cites pages that do not exist: {missing}"
