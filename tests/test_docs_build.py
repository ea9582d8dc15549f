"""The docs site (mkdocs.yml, docs/, README.md as its home page) builds with ``mkdocs build --strict``,
every page is in the nav, and the README stays a front door that points only inside the repository."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def nav_pages() -> set[str]:
    return set(re.findall(r"^\s*- [^:\n]+: (\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))


def test_every_docs_page_is_in_the_nav():
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in ROOT.joinpath("docs").rglob("*.md")}
    nav = nav_pages()
    assert "index.md" in nav and "index.md" not in pages  # the home page is README.md (docs/hooks.py)
    assert pages == nav - {"index.md"}, f"pages not in mkdocs.yml's nav: {sorted(pages - nav)}; " \
                                        f"nav entries without a page: {sorted(nav - pages - {'index.md'})}"


def test_the_readme_is_a_front_door_inside_the_repository():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert not re.search(r"\]\((?!docs/|benchmarks/results/|#)", text), "README links only to docs/ and figures"
    assert "http://" not in text and "https://" not in text


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra: pip install -e '.[dev]'")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "benchmarks" / "results" / "learning_PointGoal1.png").exists()
