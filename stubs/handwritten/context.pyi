from typing import Any

GRAPH_MODE: int
PYNATIVE_MODE: int

def _get_mode() -> int: ...
def get_context(attr_key: str) -> Any: ...
def set_context(
    *,
    mode: int = ...,
    device_target: str = ...,
    device_id: int = ...,
    save_graphs: bool | int = ...,
    save_graphs_path: str = ...,
    jit_config: dict[str, str] = ...,
    pynative_synchronize: bool = ...,
    **kwargs: Any,
) -> None: ...
