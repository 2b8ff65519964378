"""mkdocs hooks of the documentation site (mkdocs.yml ``hooks:``); the build runs without kwcell's
dependencies installed.

- Every file the pages cite in inline code (`` `tests/test_matrix.py` ``, `` `bench/scaling.py` ``,
  `` `examples/train.py` ``, `` `kwcell/_typing.pyi` ``, also in the changelog and the
  benchmarks, which the pages include) becomes a link to it in the repository:
  ``<repo_url>/blob/<extra.source_ref>/<path>``, so mkdocs.yml's ``repo_url`` is the one
  setting. A path that does not exist in the checkout fails the build.
- Each object on an API page gets a link to its source (file and line, read by griffe, as
  mkdocstrings reads it).
- ``REPO_URL`` in a page's Markdown (a link to the repository) becomes ``repo_url``.
- ``bench/compile_scaling.png``, which ``bench/scaling.py`` draws next to BENCHMARKS.md, is
  published at the same path, so BENCHMARKS.md's own image link works on the Benchmarks page
  (docs/benchmarks.md includes it) and the Performance page shows the same file.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PLOT = "bench/compile_scaling.png"
# inline code that is nothing but a path in one of these directories
CITED = re.compile(r"<code>((?:tests|bench|examples|stubs|kwcell)/[\w./-]*[\w/])</code>")
HEADING = re.compile(r'(<h([1-3]) id="(kwcell\.[\w.]+)" class="doc doc-heading">.*?</h\2>)', re.S)

_source_base = ""
_loaded: dict[str, Any] = {}


def source_url(path: str, line: int | None = None) -> str:
    return _source_base + path + (f"#L{line}" if line else "")


def on_config(config: Any) -> Any:
    global _source_base
    ref = config.extra.get("source_ref", "main")
    _source_base = f"{config.repo_url.rstrip('/')}/blob/{ref}/"
    _loaded.clear()
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, PLOT, abs_src_path=str(ROOT / PLOT)))
    return files


def _link_citations(text: str, where: str) -> str:
    def link(m: re.Match[str]) -> str:
        before = text[: m.start()]
        if before.rfind("<a ") > before.rfind("</a>"):  # already inside a link
            return m.group(0)
        path = m.group(1)
        if not (ROOT / path).exists():
            msg = f"{where} cites {path}, which does not exist"
            raise ValueError(msg)
        return f'<a class="kwcell-cite" href="{html.escape(source_url(path))}">{m.group(0)}</a>'

    return CITED.sub(link, text)


def _package() -> Any:
    """kwcell as mkdocstrings reads it (griffe, with the API pages' extension), loaded once."""
    if "kwcell" not in _loaded:
        import griffe

        extension = ROOT / "docs" / "_ext" / "griffe_kwcell.py"
        _loaded["kwcell"] = griffe.load(
            "kwcell",
            search_paths=[str(ROOT)],
            extensions=griffe.load_extensions(str(extension)),
            resolve_aliases=False,
        )
    return _loaded["kwcell"]


def _source_of(identifier: str) -> tuple[str, int] | None:
    """``(path from the repository root, line)`` of a documented object."""
    try:
        obj = _package()[identifier.removeprefix("kwcell.")]
        while obj.is_alias:
            obj = obj.target
    except Exception:  # noqa: BLE001 - no source link for what griffe cannot resolve
        return None
    if obj.filepath is None or obj.lineno is None:
        return None
    return Path(obj.filepath).resolve().relative_to(ROOT).as_posix(), obj.lineno


def _link_sources(text: str) -> str:
    def add(m: re.Match[str]) -> str:
        found = _source_of(m.group(3))
        if found is None:
            return m.group(0)
        path, line = found
        url = html.escape(source_url(path, line))
        return f'{m.group(1)}\n<p class="kwcell-source"><a href="{url}">Source: <code>{path}</code></a></p>'

    return HEADING.sub(add, text)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown.replace("](REPO_URL)", f"]({config.repo_url})")


def on_page_content(text: str, page: Any, config: Any, files: Any) -> str:
    where = page.file.src_uri
    if where.startswith("api/"):
        text = _link_sources(text)
    return _link_citations(text, where)
