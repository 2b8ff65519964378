from abc import abstractmethod
from typing import Any
from typing_extensions import Self
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
    def create_ir_tree(self, getter_mode: Any = ...) -> Any: ...  # type: ignore[override]
    def pre_process(self, dataset: Any) -> Any: ...  # type: ignore[override]
    def parse_tree(self, getter_mode: Any = ...) -> Any: ...  # type: ignore[override]
    def iterator_bootstrap(self) -> Any: ...  # type: ignore[override]
    def to_json(self, filename: Any = ...) -> Any: ...  # type: ignore[override]
    def bucket_batch_by_length(self, column_names: Any, bucket_boundaries: Any, bucket_batch_sizes: Any, element_length_function: Any = ..., pad_info: Any = ..., pad_to_bucket_boundary: Any = ..., drop_remainder: Any = ...) -> Any: ...  # type: ignore[override]
    def padded_batch(self, batch_size: Any, drop_remainder: Any = ..., num_parallel_workers: Any = ..., pad_info: Any = ...) -> Any: ...  # type: ignore[override]
    def sync_wait(self, condition_name: Any, num_batch: Any = ..., callback: Any = ...) -> Any: ...  # type: ignore[override]
    def flat_map(self, func: Any) -> Any: ...  # type: ignore[override]
    def filter(self, predicate: Any, input_columns: Any = ..., num_parallel_workers: Any = ...) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def zip(self, datasets: Any) -> Any: ...  # type: ignore[override]
    def concat(self, datasets: Any) -> Any: ...  # type: ignore[override]
    def apply(self, apply_func: Any) -> Any: ...  # type: ignore[override]
    def device_que(self, send_epoch_end: Any = ..., create_data_info_queue: Any = ..., queue_name: Any = ...) -> Any: ...  # type: ignore[override]
    def save(self, file_name: Any, num_files: Any = ..., file_type: Any = ...) -> Any: ...  # type: ignore[override]
    @property
    def input_indexs(self) -> Any: ...
    @input_indexs.setter
    def input_indexs(self, value: Any) -> None: ...  # type: ignore[override]
    def copy_batch_size(self, value: Any) -> Any: ...  # type: ignore[override]
    def get_col_names(self) -> Any: ...  # type: ignore[override]
    def output_shapes(self, estimate: Any = ...) -> Any: ...  # type: ignore[override]
    def output_types(self) -> Any: ...  # type: ignore[override]
    def num_classes(self) -> Any: ...  # type: ignore[override]
    def get_sync_notifiers(self) -> Any: ...  # type: ignore[override]
    def disable_sync(self) -> Any: ...  # type: ignore[override]
    def is_sync(self) -> Any: ...  # type: ignore[override]
    def sync_update(self, condition_name: Any, num_batch: Any = ..., data: Any = ...) -> Any: ...  # type: ignore[override]
    def get_batch_size(self) -> Any: ...  # type: ignore[override]
    def get_repeat_count(self) -> Any: ...  # type: ignore[override]
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def reset(self) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def pre_parse(self, getter_mode: Any) -> Any: ...  # type: ignore[override]
    def post_parse(self, ir_node: Any) -> Any: ...  # type: ignore[override]
    def set_init_step(self, init_step: Any) -> Any: ...  # type: ignore[override]
    def get_init_step(self) -> Any: ...  # type: ignore[override]
    def send(self, tensor: Any = ..., dst: Any = ..., group: Any = ...) -> Any: ...  # type: ignore[override]
    def recv(self, src: Any = ..., group: Any = ...) -> Any: ...  # type: ignore[override]

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
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def prepare_multiprocessing(self) -> Any: ...  # type: ignore[override]
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]

# ---- generated by stubs/generate.py from MindSpore 2.10.0: names not written by hand ----
import enum
from abc import ABCMeta, abstractmethod
from typing import Any
from typing_extensions import Self
from mindspore.train import Callback as _mindspore_train_Callback

class Caltech101Dataset(GeneratorDataset):
    def __init__(self, dataset_dir: Any, target_type: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Caltech256Dataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CelebADataset(Dataset):
    def __init__(self, dataset_dir: Any, num_parallel_workers: Any = ..., shuffle: Any = ..., usage: Any = ..., sampler: Any = ..., decode: Any = ..., extensions: Any = ..., num_samples: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ..., decrypt: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Cifar10Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Cifar100Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CityscapesDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., quality_mode: Any = ..., task: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CocoDataset(Dataset):
    def __init__(self, dataset_dir: Any, annotation_file: Any, task: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ..., extra_metadata: Any = ..., decrypt: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class DIV2KDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., downgrade: Any = ..., scale: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class EMnistDataset(Dataset):
    def __init__(self, dataset_dir: Any, name: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class FakeImageDataset(Dataset):
    def __init__(self, num_images: Any = ..., image_size: Any = ..., num_classes: Any = ..., base_seed: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class FashionMnistDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class FlickrDataset(Dataset):
    def __init__(self, dataset_dir: Any, annotation_file: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Flowers102Dataset(GeneratorDataset):
    def __init__(self, dataset_dir: Any, task: Any = ..., usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Food101Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class ImageFolderDataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., extensions: Any = ..., class_indexing: Any = ..., decode: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ..., decrypt: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class KITTIDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class KMnistDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class LFWDataset(Dataset):
    def __init__(self, dataset_dir: Any, task: Any = ..., usage: Any = ..., image_set: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class LSUNDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., classes: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class ManifestDataset(Dataset):
    def __init__(self, dataset_file: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., class_indexing: Any = ..., decode: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class MnistDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class OmniglotDataset(Dataset):
    def __init__(self, dataset_dir: Any, background: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class PhotoTourDataset(Dataset):
    def __init__(self, dataset_dir: Any, name: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Places365Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., small: Any = ..., decode: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class QMnistDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., compat: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class RandomDataset(Dataset):
    def __init__(self, total_rows: Any = ..., schema: Any = ..., columns_list: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., cache: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class RenderedSST2Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SBDataset(GeneratorDataset):
    def __init__(self, dataset_dir: Any, task: Any = ..., usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class SBUDataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SemeionDataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class STL10Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SUN397Dataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SVHNDataset(GeneratorDataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class USPSDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class VOCDataset(Dataset):
    def __init__(self, dataset_dir: Any, task: Any = ..., usage: Any = ..., class_indexing: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ..., extra_metadata: Any = ..., decrypt: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def get_class_indexing(self) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class WIDERFaceDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., decode: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class AGNewsDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class AmazonReviewDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CLUEDataset(Dataset):
    def __init__(self, dataset_files: Any, task: Any = ..., usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CoNLL2000Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class DBpediaDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class EnWik9Dataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class IMDBDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class IWSLT2016Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., language_pair: Any = ..., valid_set: Any = ..., test_set: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class IWSLT2017Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., language_pair: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Multi30kDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., language_pair: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class PennTreebankDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SogouNewsDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SQuADDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SST2Dataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class TextFileDataset(Dataset):
    def __init__(self, dataset_files: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class UDPOSDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class WikiTextDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class YahooAnswersDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class YelpReviewDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., num_parallel_workers: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CMUArcticDataset(Dataset):
    def __init__(self, dataset_dir: Any, name: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class GTZANDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class LibriTTSDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class LJSpeechDataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SpeechCommandsDataset(Dataset):
    def __init__(self, dataset_dir: Any, usage: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class TedliumDataset(Dataset):
    def __init__(self, dataset_dir: Any, release: Any, usage: Any = ..., extensions: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class YesNoDataset(Dataset):
    def __init__(self, dataset_dir: Any, num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class CSVDataset(Dataset):
    def __init__(self, dataset_files: Any, field_delim: Any = ..., column_defaults: Any = ..., column_names: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., cache: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class MindDataset(Dataset):
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def __init__(self, dataset_files: Any, columns_list: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., sampler: Any = ..., padded_sample: Any = ..., num_padded: Any = ..., num_samples: Any = ..., cache: Any = ...) -> None: ...
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def split(self, sizes: Any, randomize: Any = ...) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class OBSMindDataset(GeneratorDataset):
    def __init__(self, dataset_files: Any, server: Any, ak: Any, sk: Any, sync_obs_path: Any, columns_list: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., shard_equal_rows: Any = ...) -> None: ...
    def add_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def use_sampler(self, new_sampler: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class TFRecordDataset(Dataset):
    def __init__(self, dataset_files: Any, schema: Any = ..., columns_list: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., num_shards: Any = ..., shard_id: Any = ..., shard_equal_rows: Any = ..., cache: Any = ..., compression_type: Any = ...) -> None: ...
    def parse(self, children: Any = ...) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def is_sharded(self) -> Any: ...  # type: ignore[override]
    def build_vocab(self, columns: Any, freq_range: Any, top_k: Any, special_tokens: Any, special_first: Any) -> Any: ...  # type: ignore[override]
    def build_sentencepiece_vocab(self, columns: Any, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class NumpySlicesDataset(GeneratorDataset):
    def __init__(self, data: Any, column_names: Any = ..., num_samples: Any = ..., num_parallel_workers: Any = ..., shuffle: Any = ..., sampler: Any = ..., num_shards: Any = ..., shard_id: Any = ...) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class PaddedDataset(GeneratorDataset):
    def __init__(self, padded_samples: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class DistributedSampler:
    def __init__(self, num_shards: Any, shard_id: Any, shuffle: Any = ..., num_samples: Any = ..., offset: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def parse_for_minddataset(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def set_offset(self, offset: Any) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class RandomSampler:
    def __init__(self, replacement: Any = ..., num_samples: Any = ..., shuffle: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def parse_for_minddataset(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class SequentialSampler:
    def __init__(self, start_index: Any = ..., num_samples: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def parse_for_minddataset(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class SubsetRandomSampler(SubsetSampler):
    def parse(self) -> Any: ...  # type: ignore[override]
    def is_shuffled(self) -> Any: ...  # type: ignore[override]
    def parse_for_minddataset(self) -> Any: ...  # type: ignore[override]
    def get_shuffle_mode(self) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class SubsetSampler:
    def __init__(self, indices: Any, num_samples: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def parse_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class PKSampler:
    def __init__(self, num_val: Any, num_class: Any = ..., shuffle: Any = ..., class_column: Any = ..., num_samples: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def parse_for_minddataset(self) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class WeightedRandomSampler:
    def __init__(self, weights: Any, num_samples: Any = ..., replacement: Any = ...) -> None: ...
    def parse(self) -> Any: ...
    def is_shuffled(self) -> Any: ...
    def is_sharded(self) -> Any: ...
    def get_shuffle_mode(self) -> Any: ...
    def add_child(self, sampler: Any) -> Any: ...
    def get_child(self) -> Any: ...
    def parse_child(self) -> Any: ...
    def parse_child_for_minddataset(self) -> Any: ...
    def get_num_samples(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class DatasetCache:
    def __init__(self, session_id: Any, size: Any = ..., spilling: Any = ..., hostname: Any = ..., port: Any = ..., num_connections: Any = ..., prefetch_size: Any = ...) -> None: ...
    def get_stat(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class DSCallback:
    def __init__(self, step_size: Any = ...) -> None: ...
    def ds_begin(self, ds_run_context: Any) -> Any: ...
    def ds_epoch_begin(self, ds_run_context: Any) -> Any: ...
    def ds_epoch_end(self, ds_run_context: Any) -> Any: ...
    def ds_step_begin(self, ds_run_context: Any) -> Any: ...
    def ds_step_end(self, ds_run_context: Any) -> Any: ...
    def create_runtime_obj(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class WaitedDSCallback(_mindspore_train_Callback, DSCallback):
    def __init__(self, step_size: Any = ...) -> None: ...
    def sync_epoch_begin(self, train_run_context: Any, ds_run_context: Any) -> Any: ...  # type: ignore[override]
    def sync_step_begin(self, train_run_context: Any, ds_run_context: Any) -> Any: ...  # type: ignore[override]
    def epoch_end(self, run_context: Any) -> Any: ...  # type: ignore[override]
    def ds_epoch_begin(self, ds_run_context: Any) -> Any: ...  # type: ignore[override]
    def step_end(self, run_context: Any) -> Any: ...  # type: ignore[override]
    def ds_step_begin(self, ds_run_context: Any) -> Any: ...  # type: ignore[override]
    def create_runtime_obj(self) -> Any: ...  # type: ignore[override]
    def end(self, run_context: Any) -> Any: ...  # type: ignore[override]
    def __getattr__(self, name: str) -> Any: ...

class Schema:
    def __init__(self, schema_file: Any = ...) -> None: ...
    def add_column(self, name: Any, de_type: Any, shape: Any = ...) -> Any: ...
    def parse_columns(self, columns: Any) -> Any: ...
    def to_json(self) -> Any: ...
    def from_json(self, json_obj: Any) -> Any: ...
    @staticmethod
    def get_num_rows(schema: Any) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...
def compare(pipeline1: Any, pipeline2: Any) -> Any: ...
def deserialize(input_dict: Any = ..., json_filepath: Any = ...) -> Any: ...
def serialize(dataset: Any, json_filepath: Any = ...) -> Any: ...
def show(dataset: Any, indentation: Any = ...) -> Any: ...
def sync_wait_for_dataset(rank_id: Any, rank_size: Any, current_epoch: Any, obs_runtime: Any) -> Any: ...
def zip(datasets: Any) -> Any: ...
