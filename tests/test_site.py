"""The built documentation site as a reader sees it, in a real browser (marker ``site``).

The last step of .ci/run: it builds the site with ``mkdocs build --strict`` in the virtualenv
of docs/requirements-browser.txt (no MindSpore there: run with ``--noconftest``), serves it on
localhost and reads every page in Debian's chromium through playwright (``KWCELL_CHROMIUM``
names another chromium binary; playwright never downloads one):

- no code block, error message or help text runs past its box at 1280 px, nor at 1600 px
  where the error reference shows wrong and fixed code side by side, and the copy button sits
  in a margin of its own; on a 390 px phone only Python may scroll inside its box, and no page
  scrolls sideways;
- every title in the navigation is the heading of the page it opens;
- searching for ``internal_params`` lists the weight-gradients guide first;
- the API pages show the typed signatures under public anchors, with source links; cited
  files link to the repository; the benchmark plot and the install line are on the site.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("KWCELL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PUBLIC = [
    "GradcheckError",
    "KwCell",
    "KwCellDefinitionError",
    "KwCellMeta",
    "KwCellWarning",
    "custom_bprop",
    "explain",
    "grad",
    "gradcheck",
    "keyword_bprop",
    "value_and_grad",
]

# Blocks that must not scroll sideways: their box, their scroll width, the copy button's left
# edge and the right edge of the text area (the box without its right padding).
BLOCKS_JS = """() => [...document.querySelectorAll('article pre > code')].map((code, i) => {
  const box = code.closest('[class*="language-"]');
  const lang = ((box && box.className.match(/language-([\\w-]+)/)) || [])[1] || '';
  const button = code.parentElement.querySelector('.md-clipboard');
  const rect = code.getBoundingClientRect();
  const text = rect.right - parseFloat(getComputedStyle(code).paddingRight);
  return {i, lang, over: code.scrollWidth - code.clientWidth,
          button: button ? button.getBoundingClientRect().left : null, text,
          line: code.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '').slice(0, 90)};
})"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI builds it (``--strict``), into a directory of its own."""
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no chromium at {CHROMIUM}: apt-get install chromium (or set KWCELL_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _pages(site: Path) -> list[str]:
    """Every page of the site, as a path relative to its root (``""`` for the home page)."""
    found = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        if rel.split("/", 1)[0] not in {"assets", "search"}:
            found.append("" if rel == "." else rel + "/")
    return found


@pytest.mark.parametrize("width", [1280, 1600])
def test_no_code_or_error_block_runs_past_its_box(
    site: Path, base_url: str, browser: Any, width: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    overflowing, covered, blocks = [], [], 0
    for rel in _pages(site):
        page.goto(base_url + rel)
        page.wait_for_load_state("load")
        for block in page.evaluate(BLOCKS_JS):
            blocks += 1
            where = f"/{rel} block {block['i']} ({block['lang'] or 'no language'})"
            if block["over"] > 1:
                overflowing.append(f"{where}: {block['over']} px too wide: {block['line']!r}")
            if block["button"] is not None and block["button"] < block["text"] - 1:
                covered.append(f"{where}: the copy button covers the text")
    page.close()
    assert blocks > 150
    assert not overflowing and not covered, "\n".join(overflowing + covered)


def test_the_error_reference_is_side_by_side_only_where_both_columns_fit(base_url: str, browser: Any) -> None:
    columns = {}
    for width in (1280, 1600):
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(base_url + "errors/")
        columns[width] = page.evaluate(
            "() => getComputedStyle(document.querySelector('.grid')).gridTemplateColumns.split(' ').length"
        )
        page.close()
    assert columns == {1280: 1, 1600: 2}


def test_on_a_phone_only_python_scrolls_and_no_page_scrolls_sideways(
    site: Path, base_url: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    problems = []
    for rel in _pages(site):
        page.goto(base_url + rel)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > 390:
            problems.append(f"/{rel}: the page is {width} px wide")
        for block in page.evaluate(BLOCKS_JS):
            if block["over"] > 1 and block["lang"] in {"text", "console", "bash"}:
                problems.append(f"/{rel} block {block['i']} ({block['lang']}) scrolls: {block['line']!r}")
    page.close()
    assert not problems, "\n".join(problems)


def test_every_navigation_title_is_its_pages_heading(site: Path, base_url: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url)
    entries = page.evaluate(
        """() => [...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]
             .filter(a => !a.getAttribute('href').includes('#'))  // the open page's own headings
             .map(a => [a.querySelector('.md-ellipsis')?.textContent.trim() || a.textContent.trim(),
                        a.href])"""
    )
    assert len(entries) == len(_pages(site)), entries
    different = []
    for title, href in entries:
        page.goto(href)
        heading = page.evaluate(
            "() => document.querySelector('article h1').textContent.replace('¶', '').trim()"
        )
        if heading != title:
            different.append(f"{href}: navigation {title!r}, heading {heading!r}")
    page.close()
    assert not different, "\n".join(different)


def test_search_finds_internal_params_with_weight_gradients_first(base_url: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url)
    page.keyboard.press("/")  # Material's shortcut to the search box
    page.keyboard.type("internal_params")
    page.wait_for_selector(".md-search-result__item a", timeout=20_000)
    first = page.evaluate("() => document.querySelector('.md-search-result__item a').href")
    titles = page.evaluate(
        "() => [...document.querySelectorAll('.md-search-result__item > a h1')]"
        ".map(h => h.textContent.trim())"
    )
    page.close()
    assert first.startswith(base_url + "guides/weight-gradients/"), (first, titles)
    assert titles[0] == "Weight gradients", titles


def test_api_pages_show_the_typed_signatures_under_public_anchors(base_url: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    texts = {}
    for name in PUBLIC:
        page.goto(f"{base_url}api/{name}/")
        ids = page.evaluate("() => [...document.querySelectorAll('[id^=\"kwcell\"]')].map(e => e.id)")
        assert f"kwcell.{name}" in ids, (name, ids)
        assert not [i for i in ids if re.fullmatch(rf"kwcell\._\w+\.{name}", i)], (name, ids)
        source = page.evaluate("() => document.querySelector('.kwcell-source a')?.href")
        assert source and re.match(
            r"https://github\.com/kwcell/kwcell/blob/main/kwcell/_\w+\.pyi?#L\d+$", source
        )
        texts[name] = page.evaluate(
            "() => [...document.querySelectorAll('.doc-signature')].map(s => s.textContent).join('\\n')"
        )
    page.close()
    for name in ("grad", "value_and_grad"):
        assert "Callable[P, Tensor]" in texts[name] or "tuple[R, Tensor]" in texts[name], texts[name]
        assert not re.search(r"\b(fn|grad_position|weights): Any\b", texts[name]), texts[name]
    assert "CustomBprop[P, R]" in texts["custom_bprop"]
    assert "keyword_bprop(cls: C) -> C" in texts["keyword_bprop"]
    for name, text in texts.items():
        assert not re.search(r"\b_[PRCF]\b|\bAny = None\b", text), (name, text)


def test_no_page_loads_anything_from_outside_the_site(site: Path, base_url: str, browser: Any) -> None:
    """No web fonts, no scripts, no repository facts from api.github.com (the repository link
    is drawn by docs/_ext/theme/partials/source.html without them)."""
    page = browser.new_page()
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            None if r.url.startswith(base_url) or not r.url.startswith("http") else outside.append(r.url)
        ),
    )
    for rel in _pages(site):
        page.goto(base_url + rel)
        page.wait_for_load_state("networkidle")
    page.close()
    assert not outside, outside


def test_cited_files_link_to_the_repository(base_url: str, browser: Any) -> None:
    page = browser.new_page()
    page.goto(base_url + "guides/weight-gradients/")
    links = page.evaluate("() => [...document.querySelectorAll('a.kwcell-cite')].map(a => a.href)")
    repo = page.evaluate("() => document.querySelector('.md-header__source a, a.md-source')?.href")
    page.close()
    assert "https://github.com/kwcell/kwcell/blob/main/tests/test_weights.py" in links
    assert repo and repo.rstrip("/") == "https://github.com/kwcell/kwcell"


def test_the_benchmark_plot_and_the_install_line_are_on_the_site(base_url: str, browser: Any) -> None:
    page = browser.new_page()
    for rel in ("benchmarks/", "guides/performance/"):
        page.goto(base_url + rel)
        widths = page.evaluate(
            "() => [...document.querySelectorAll('article img')].filter(i => i.src.endsWith("
            "'compile_scaling.png')).map(i => i.naturalWidth)"
        )
        assert widths and all(w > 0 for w in widths), rel
    page.goto(base_url)
    code = page.evaluate(
        "() => [...document.querySelectorAll('article pre')].map(p => p.textContent).join('\\n')"
    )
    page.close()
    assert "pip install" in code
