#!/usr/bin/env bash
# Check stubs/mindspore-stubs against the installed MindSpore with mypy's stubtest.
# Usage (from anywhere): PYTHON=/path/to/python stubs/run_stubtest.sh [extra stubtest args]
set -euo pipefail

PYTHON="${PYTHON:-python}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"

# mypy only recognises a `<name>-stubs` directory inside site-packages; for a local run, expose
# the stub package under the import name `mindspore` through a symlink in a temporary directory.
stub_root="$(mktemp -d)"
trap 'rm -rf "${stub_root}"' EXIT
ln -s "${repo_root}/stubs/mindspore-stubs" "${stub_root}/mindspore"
# An empty config, so that the project's own mypy settings (plugins etc.) do not apply here.
printf '[mypy]\n' >"${stub_root}/mypy.ini"

# MindSpore 2.10's `mindspore.__all__` lists names that do not exist (the characters of its
# version string among them), so `from mindspore import *` -- which stubtest performs -- fails.
# Drop those entries at runtime first so the top-level module is checked as well.
MYPYPATH="${stub_root}" "${PYTHON}" -c '
import sys

import mindspore

mindspore.__all__ = [name for name in mindspore.__all__ if name and hasattr(mindspore, name)]

from mypy.stubtest import main

sys.exit(main())
' mindspore \
    --ignore-missing-stub \
    --allowlist stubs/stubtest-allowlist.txt \
    --allowlist stubs/stubtest-allowlist-generated.txt \
    --mypy-config-file "${stub_root}/mypy.ini" \
    "$@"
