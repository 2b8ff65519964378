from collections.abc import Callable, Iterable, Iterator
from typing import Any

class Dataset:
    def __init__(
        self, children: Any = None, num_parallel_workers: int | None = None, cache: Any = None
    ) -> None: ...
    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset: ...
    def create_dict_iterator(
        self, num_epochs: int = -1, output_numpy: bool = False, do_copy: bool = False
    ) -> Iterator[dict[str, Any]]: ...
    def create_tuple_iterator(
        self,
        columns: list[str] | None = None,
        num_epochs: int = -1,
        output_numpy: bool = False,
        do_copy: bool = False,
    ) -> Iterator[list[Any]]: ...
    def get_dataset_size(self) -> int: ...
    def map(
        self,
        operations: Any,
        input_columns: str | list[str] | None = None,
        output_columns: str | list[str] | None = None,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset: ...
    def repeat(self, count: int | None = None) -> Dataset: ...
    def take(self, count: int = -1) -> Dataset: ...
    def skip(self, count: int) -> Dataset: ...
    def project(self, columns: str | list[str]) -> Dataset: ...
    def rename(self, input_columns: str | list[str], output_columns: str | list[str]) -> Dataset: ...
    def __iter__(self) -> Iterator[list[Any]]: ...
    def shuffle(self, buffer_size: int) -> Dataset: ...

class GeneratorDataset(Dataset):
    def __init__(
        self,
        source: Callable[[], Iterable[Any]] | Iterable[Any] | Any,
        column_names: str | list[str] | None = None,
        column_types: list[Any] | None = None,
        schema: Any = None,
        num_samples: int | None = None,
        num_parallel_workers: int = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        python_multiprocessing: bool = True,
        max_rowsize: int | None = None,
        batch_sampler: Any = None,
        collate_fn: Callable[..., Any] | None = None,
    ) -> None: ...
