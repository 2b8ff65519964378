"""``python -m kwcell check PATH_OR_MODULE...``: the command line is :mod:`kwcell._cli`."""

from __future__ import annotations

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
