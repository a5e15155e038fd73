"""Code and docs name a rule by the docs section that states it (``docs/rewards.md#v2``); every such
reference, and every link between docs pages, points at a section that exists."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = re.compile(r"docs/([a-z0-9-]+\.md)#([A-Za-z0-9_-]+)")
LINK = re.compile(r"\]\(([a-z0-9-]+\.md)?#([A-Za-z0-9_-]+)\)")
SOURCES = ("core/src", "plugins", "examples", "tests", "benchmarks", "README.md")


def slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify, backticks dropped)."""
    text = unicodedata.normalize("NFKD", heading.replace("`", "")).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: str) -> set[str]:
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    found: set[str] = set()
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def test_every_docs_reference_in_code_names_an_existing_section() -> None:
    missing = []
    for root in SOURCES:
        for path in sorted([ROOT / root] if root.endswith(".md") else (ROOT / root).rglob("*")):
            if path.suffix not in (".py", ".toml", ".md") or ".egg-info" in str(path) or not path.is_file():
                continue
            for page, anchor in REFERENCE.findall(path.read_text(encoding="utf-8")):
                if not (DOCS / page).is_file() or anchor not in anchors(page):
                    missing.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor}")
    assert missing == []


def test_every_link_between_docs_pages_names_an_existing_section() -> None:
    missing = []
    for path in sorted([*DOCS.glob("*.md"), ROOT / "README.md"]):
        for page, anchor in LINK.findall(path.read_text(encoding="utf-8")):
            target = page or path.name
            if path.name == "README.md" and not page:
                continue
            if not (DOCS / target).is_file() or anchor not in anchors(target):
                missing.append(f"{path.name}: {target}#{anchor}")
    assert missing == []


def test_the_slug_matches_mkdocs() -> None:
    assert slug(" `v2`") == "v2" and slug(" `gt_mix`") == "gt_mix"
    assert slug(" Authorship and validity") == "authorship-and-validity"
    assert slug(" Warm-start and curriculum") == "warm-start-and-curriculum"
