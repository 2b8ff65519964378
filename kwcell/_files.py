"""Finding the ``.py`` files of a target, shared by ``check`` and ``migrate`` (pure Python)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence

__all__ = ["may_have_cells", "python_files"]


def _excluded(path: str, start: str, excludes: Sequence[str]) -> bool:
    """Whether ``path`` (a file or directory found under the target ``start``) matches a
    ``--exclude`` glob: the path as found, the path from the target, or the name."""
    candidates = (path, os.path.relpath(path, start), os.path.basename(path))
    return any(fnmatch.fnmatch(c, glob) for glob in excludes for c in candidates)


def python_files(directory: str, excludes: Sequence[str] = ()) -> list[str]:
    """The ``.py`` files under ``directory``, sorted, without hidden or excluded ones (shared
    by ``check`` and ``migrate``)."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith((".", "__pycache__"))
            and not _excluded(os.path.join(root, d), directory, excludes)
        )
        found += [
            os.path.join(root, f)
            for f in sorted(files)
            if f.endswith(".py") and not _excluded(os.path.join(root, f), directory, excludes)
        ]
    return found


#: Text a module must contain to have anything to check: a bprop (``def bprop``, a
#: ``custom_bprop`` function, ``@keyword_bprop``) or a KwCell.
_RELEVANT = re.compile(rb"bprop|KwCell")


def may_have_cells(path: str) -> bool:
    """The cheap prefilter of a directory's files: only files whose text mentions ``bprop``
    or ``KwCell`` are imported (the others have nothing to check, and are not run)."""
    try:
        with open(path, "rb") as f:
            return _RELEVANT.search(f.read()) is not None
    except OSError:
        return True  # reported by the import
