"""MkDocs hooks (``hooks:`` in mkdocs.yml), so that the site is built from the repository as it is.

- The home page ``index.md`` is README.md, its links to ``docs/<page>.md`` made page-relative.
- The figures in ``benchmarks/results/`` are served at the same path under the site, and a page's
  ``../benchmarks/results/<figure>.png`` (the path that works when the page is read in the
  repository) points at them.

With ``strict: true`` every link of README.md and of the pages must then resolve.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
FIGURES = "benchmarks/results"


def home_page() -> str:
    text = (ROOT / "README.md").read_text()
    return re.sub(r"\]\(docs/", "](", text)


def on_files(files, config):
    files.append(File.generated(config, "index.md", content=home_page()))
    for figure in sorted((ROOT / FIGURES).glob("*.png")):
        files.append(File.generated(config, f"{FIGURES}/{figure.name}", abs_src_path=str(figure)))
    return files


def on_page_markdown(markdown, page, config, files):
    return markdown.replace(f"](../{FIGURES}/", f"]({FIGURES}/").replace("](../README.md", "](index.md")
