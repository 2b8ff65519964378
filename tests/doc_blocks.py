"""The code blocks of the documentation (``docs/*.md``, README.md), read as a user reads them.

Conventions the docs follow, so that every block is checked as what it claims to be:

- A ```` ```python ```` block is a whole program, run as pasted from a file of its own
  (``title="net.py"`` names that file; other blocks get a name of their own).
- A ```` ```text ```` block right after a ``python`` block (only blank lines between) is what
  running it gives: either lines ``SomeError: message`` / ``SomeWarning: message`` (the block
  raises that exception, or emits that warning, with exactly that message; a message may be
  wrapped over several lines, and whitespace is compared collapsed), or else the exact standard
  output (``#<number>`` in kwcell's generated file names is compared as ``#N``).
- A ```` ```console ```` block is ``$ command`` lines, each followed by its exact output. The
  commands are ``kwcell ...`` (the installed command) and run in a directory holding the page's
  titled ``python`` blocks.
- ``bash`` and ``yaml``/``toml`` blocks are commands and configuration to copy; tests that run
  them find them here (see tests/test_docs.py).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)(?P<info>.*)$")
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
# "KwCellDefinitionError: ..." or "mindspore's ValueError: ..." at the start of a line
_RAISED = re.compile(r"^(?P<name>[A-Z]\w*(?:Error|Warning|Exception)): ", re.MULTILINE)
GENERATED_COUNTER = re.compile(r"#\d+>")


@dataclass
class Block:
    """One fenced code block."""

    page: str  # path relative to the repository root
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    title: str | None = None
    end: int = 0  # line of the closing fence
    result: Block | None = field(default=None, repr=False)  # the text block that follows

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def expected_raised(self) -> list[tuple[str, str]]:
        """``(exception or warning class name, message)`` pairs from the result block."""
        if self.result is None:
            return []
        text = self.result.code
        starts = list(_RAISED.finditer(text))
        if not starts or starts[0].start() != 0:
            return []
        pairs = []
        for m, nxt in zip(starts, [*starts[1:], None], strict=True):
            message = text[m.end() : nxt.start() if nxt else len(text)]
            pairs.append((m.group("name"), collapse(message)))
        return pairs

    def expected_stdout(self) -> str | None:
        if self.result is None or self.expected_raised():
            return None
        return self.result.code


def collapse(text: str) -> str:
    return " ".join(text.split())


def parse(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, each ``python`` block linked to its result."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or (not m.group("lang") and lines[i].strip() != "```"):
            i += 1
            continue
        indent, start = m.group("indent"), i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != indent + "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        title = _TITLE.search(m.group("info"))
        blocks.append(
            Block(page, start + 1, m.group("lang"), "\n".join(body), title and title.group("title"), i + 1)
        )
        i += 1
    for prev, nxt in itertools.pairwise(blocks):
        between = lines[prev.end : nxt.line - 1]
        if prev.lang == "python" and nxt.lang == "text" and not any(s.strip() for s in between):
            prev.result = nxt
    return blocks


def pages() -> list[Path]:
    """The site's pages: not the snippets they include (``docs/_snippets``), nor ``docs/_ext``."""
    return sorted(p for p in DOCS.rglob("*.md") if not p.relative_to(DOCS).parts[0].startswith("_"))


def snippets() -> list[Path]:
    """The Markdown the pages include with ``--8<--`` (the warnings several pages share)."""
    return sorted((DOCS / "_snippets").glob("*.md"))


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in parse(p)]
