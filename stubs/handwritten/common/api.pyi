# Only what kwcell itself uses: MindSpore's PyNative executor, to ask whether a gradient is
# being recorded.

class _PyNativeExecutor:
    def requires_grad(self) -> bool: ...

_pynative_executor: _PyNativeExecutor
