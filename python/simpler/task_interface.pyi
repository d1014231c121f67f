# Type stub of simpler.task_interface (the classes are bound in C++, see task_interface.py).
from __future__ import annotations

import enum
from typing import Any, Iterable, Optional, Sequence, SupportsIndex, Tuple, Union

from simpler.chip_worker import ChipWorker as ChipWorker
from simpler.errors import ChipWorkerError as ChipWorkerError
from simpler.errors import UnsupportedRuntimeOperation as UnsupportedRuntimeOperation

_Bytes = Union[bytes, bytearray, memoryview, Any]  # any C-contiguous buffer-protocol object

CHIP_TENSOR_MAX_DIMS: int
CHIP_MAX_TENSOR_ARGS: int
CHIP_MAX_SCALAR_ARGS: int
CHIP_MAX_SIGNATURE: int
CHIP_MAX_FUNC_ID: int
CHIP_MAX_FUNC_NAME: int
SIMPLER_OUTPUT_PREFIX_MAX: int
PTO_RUNTIME_ERR_BASE: int
# PTO_RUNTIME_ERR_* constants: re-exported from the one status list (simpler.errors);
# tests/python/test_public_api.py checks that this list matches the module.
PTO_RUNTIME_ERR_INTERNAL: int
PTO_RUNTIME_ERR_UNSUPPORTED: int
PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE: int
PTO_RUNTIME_ERR_INVALID_STATE: int
PTO_RUNTIME_ERR_INVALID_ARGUMENT: int
PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED: int
PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED: int
PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT: int
PTO_RUNTIME_ERR_CAPACITY_EXCEEDED: int
PTO_RUNTIME_ERR_TIMEOUT: int

class DataType(enum.IntEnum):
    FLOAT32 = 0
    FLOAT16 = 1
    BFLOAT16 = 2
    INT8 = 3
    INT16 = 4
    INT32 = 5
    INT64 = 6
    UINT8 = 7
    UINT16 = 8
    UINT32 = 9
    UINT64 = 10
    BOOL = 11
    FLOAT64 = 12
    @property
    def element_size(self) -> int: ...
    @staticmethod
    def from_name(name: str) -> DataType: ...
    @staticmethod
    def from_numpy(dtype: Any) -> DataType: ...
    def to_numpy(self) -> Any: ...

class ArgDirection(enum.IntEnum):
    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3

class AddressSpace(enum.IntEnum):
    HOST = 0
    DEVICE = 1

class ChipTensor:
    @staticmethod
    def make(ptr: int, shape: Sequence[int], dtype: DataType, buffer_bytes: int = 0) -> ChipTensor: ...
    @staticmethod
    def from_array(array: Any, dtype: Optional[DataType] = None) -> ChipTensor: ...
    def slice(self, dim: int, start: int, stop: int) -> ChipTensor: ...
    def reshape(self, shape: Sequence[int]) -> ChipTensor: ...
    def transpose(self, dim0: int, dim1: int) -> ChipTensor: ...
    def validate(self) -> None: ...
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    ndims: int
    dtype: DataType
    space: AddressSpace
    numel: int
    nbytes: int
    addr: int
    buffer_size: int
    start_offset: int
    data_ptr: int
    is_contiguous: bool
    byte_extent: Tuple[int, int]
    readonly: bool

class ChipStorageTaskArgs:
    def __init__(self) -> None: ...
    def add_tensor(self, tensor: ChipTensor) -> None: ...
    def add_scalar(self, value: SupportsIndex) -> None: ...
    def add_scalar_i64(self, value: int) -> None: ...
    def add_scalar_u64(self, value: int) -> None: ...
    def add_scalar_f32(self, value: float) -> None: ...
    def add_scalar_f64(self, value: float) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    tensor_count: int
    scalar_count: int
    scalars: list[int]
    def tensor(self, index: int) -> ChipTensor: ...
    def scalar(self, index: int) -> int: ...

class CallConfig:
    def __init__(self, *, enable_swimlane: bool = ..., dump_args: bool = ...,
                 dump_dep_graph: bool = ..., enable_profiling: bool = ...,
                 output_prefix: str = ..., aicpu_thread_num: int = ...,
                 task_window_size: int = ..., heap_ring_bytes: int = ...,
                 dep_pool_size: int = ..., tensormap_capacity: int = ...,
                 watchdog_timeout_ms: int = ..., pipeline_depth: int = ...) -> None: ...
    enable_swimlane: bool
    dump_args: bool
    dump_dep_graph: bool
    enable_profiling: bool
    output_prefix: str
    aicpu_thread_num: int
    task_window_size: int
    heap_ring_bytes: int
    dep_pool_size: int
    tensormap_capacity: int
    watchdog_timeout_ms: int
    pipeline_depth: int
    def validate(self) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def copy(self) -> CallConfig: ...

class ArgSpec:
    def __init__(self, direction: Union[ArgDirection, int], dtype: Optional[Any] = None,
                 rank: int = 0) -> None: ...
    direction: ArgDirection
    dtype: Optional[DataType]
    rank: int  # 0 = any
    typed: bool

_SigEntry = Union[ArgDirection, int, ArgSpec, Tuple[Any, ...]]

class CoreCallable:
    @staticmethod
    def build(signature: Sequence[_SigEntry], binary: _Bytes,
              core_type: Optional[str] = None) -> CoreCallable: ...
    @staticmethod
    def from_bytes(image: _Bytes) -> CoreCallable: ...
    def bytes(self) -> bytes: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    signature: list[ArgDirection]
    arg_specs: list[ArgSpec]
    core_type: Optional[str]  # "aic" / "aiv" / "mix" (cluster task kernel) / None (not recorded)
    binary: bytes

class ChipCallable:
    @staticmethod
    def build(signature: Sequence[_SigEntry], func_name: str, binary: _Bytes,
              children: Iterable[Tuple[int, CoreCallable]] = ()) -> ChipCallable: ...
    @staticmethod
    def from_kernel(core_callable: CoreCallable, block_num: int = 1, *,
                    core_type: Optional[str] = None, compiler: Any = None) -> ChipCallable: ...
    @staticmethod
    def from_bytes(image: _Bytes) -> ChipCallable: ...
    def bytes(self) -> bytes: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    signature: list[ArgDirection]
    arg_specs: list[ArgSpec]
    func_name: str
    binary: bytes
    children: list[Tuple[int, CoreCallable]]
    func_ids: list[int]
