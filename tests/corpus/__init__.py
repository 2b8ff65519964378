"""The corpus: custom-bprop cells re-implemented from public MindSpore code (``harness.py``)."""
