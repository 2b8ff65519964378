"""On demand: 100,000 differential binding examples (tests/test_fuzz.py runs 2,400 in CI).

Run: ``cd /work/main && python bench/fuzz_100k.py [N]``. Each example is one random call
checked against Python's binding through the KwCell binder, the real PyNative cell call and
the kwcell.grad binder; signatures are reused for 8 calls each, as in CI.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_support import Sig, calls, load_module, signatures, unload_module
from tests.test_fuzz import CALLS_PER_SIGNATURE, check_binding


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    n_signatures = total // CALLS_PER_SIGNATURE

    @settings(
        max_examples=n_signatures, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(data=st.data(), sig=signatures())
    def run(data: st.DataObject, sig: Sig) -> None:
        module = load_module(sig)
        try:
            check_binding(
                sig, module, [data.draw(calls(sig)) for _ in range(CALLS_PER_SIGNATURE)], real_cell_calls=True
            )
        finally:
            unload_module(module)

    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    print(
        f"fuzz: {n_signatures * CALLS_PER_SIGNATURE} binding examples ({n_signatures} signatures) "
        f"agree with Python in {elapsed:.1f} s"
    )


if __name__ == "__main__":
    main()
