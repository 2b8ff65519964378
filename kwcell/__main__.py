"""``python -m kwcell check PATH_OR_MODULE...``: see :mod:`kwcell._check` for the codes."""

from __future__ import annotations

import sys

from ._check import main

if __name__ == "__main__":
    sys.exit(main())
