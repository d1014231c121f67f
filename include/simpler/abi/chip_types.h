/* simpler — the plain-data types that cross every boundary (C ABI, kernels, orchestration).
 *
 * Everything here is POD and trivially copyable: it is memcpy'd across the C ABI and
 * read by kernels compiled separately. Layout changes require SIMPLER_CHIP_TYPES_VERSION++.
 */
#ifndef SIMPLER_ABI_CHIP_TYPES_H
#define SIMPLER_ABI_CHIP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPLER_CHIP_TYPES_VERSION 1

#define CHIP_TENSOR_MAX_DIMS 5
#define CHIP_MAX_TENSOR_ARGS 32
#define CHIP_MAX_SCALAR_ARGS 32
#define CHIP_MAX_SIGNATURE (CHIP_MAX_TENSOR_ARGS + CHIP_MAX_SCALAR_ARGS)
#define CHIP_MAX_FUNC_ID 63 /* child func ids are 0..CHIP_MAX_FUNC_ID */
#define CHIP_MAX_FUNC_NAME 127

/* Element types. Values are part of the ABI. */
typedef enum ChipDataType {
  CHIP_DT_FLOAT32 = 0,
  CHIP_DT_FLOAT16 = 1,
  CHIP_DT_BFLOAT16 = 2,
  CHIP_DT_INT8 = 3,
  CHIP_DT_INT16 = 4,
  CHIP_DT_INT32 = 5,
  CHIP_DT_INT64 = 6,
  CHIP_DT_UINT8 = 7,
  CHIP_DT_UINT16 = 8,
  CHIP_DT_UINT32 = 9,
  CHIP_DT_UINT64 = 10,
  CHIP_DT_BOOL = 11,
  CHIP_DT_FLOAT64 = 12,
  CHIP_DT_COUNT = 13
} ChipDataType;

/* Direction of one argument of a callable's signature. */
typedef enum ChipArgDirection {
  CHIP_ARG_SCALAR = 0,
  CHIP_ARG_IN = 1,
  CHIP_ARG_OUT = 2,
  CHIP_ARG_INOUT = 3
} ChipArgDirection;

/* Where a tensor's buffer lives. HOST: the runtime stages it to device memory (and back
 * for OUT/INOUT). DEVICE: caller-owned device memory, passed through untouched. */
typedef enum ChipAddressSpace { CHIP_SPACE_HOST = 0, CHIP_SPACE_DEVICE = 1 } ChipAddressSpace;

typedef struct ChipBuffer {
  uint64_t addr; /* base address of the buffer */
  uint64_t size; /* bytes */
} ChipBuffer;

/* A strided view of a buffer. Element i0..in lives at
 * buffer.addr + (start_offset + sum(ik * strides[k])) * elem_size. */
typedef struct ChipTensor {
  ChipBuffer buffer;
  int64_t start_offset; /* elements */
  uint32_t ndims;       /* 1..CHIP_TENSOR_MAX_DIMS */
  uint32_t dtype;       /* ChipDataType */
  uint32_t space;       /* ChipAddressSpace */
  uint32_t reserved;
  int64_t shapes[CHIP_TENSOR_MAX_DIMS];
  int64_t strides[CHIP_TENSOR_MAX_DIMS]; /* elements */
} ChipTensor;

/* Arguments of one call: tensors first, then scalars (64-bit bit patterns). */
typedef struct ChipStorageTaskArgs {
  uint32_t tensor_count;
  uint32_t scalar_count;
  ChipTensor tensors[CHIP_MAX_TENSOR_ARGS];
  uint64_t scalars[CHIP_MAX_SCALAR_ARGS];
} ChipStorageTaskArgs;

/* Diagnostics switches (CallConfig.flags). */
#define SIMPLER_CFG_SWIMLANE (1u << 0)  /* write a per-core task timeline */
#define SIMPLER_CFG_DUMP_ARGS (1u << 1) /* write the entry args of each run */
#define SIMPLER_CFG_DEP_GRAPH (1u << 2) /* write the inferred dependency graph (DOT) */
#define SIMPLER_CFG_PROFILING (1u << 3) /* write per-task timing counters */
#define SIMPLER_CFG_ALL_FLAGS 0xFu

#define SIMPLER_OUTPUT_PREFIX_MAX 256
#define SIMPLER_MAX_PIPELINE_DEPTH 8 /* CallConfig.pipeline_depth limit */

/* Run/context configuration. Zero means "use the default" for every numeric field. */
typedef struct SimplerCallConfig {
  uint32_t struct_size;                          /* sizeof(SimplerCallConfig): lets the ABI grow */
  uint32_t flags;                                /* SIMPLER_CFG_* */
  char output_prefix[SIMPLER_OUTPUT_PREFIX_MAX]; /* required when any flag is on */
  int32_t aicpu_thread_num;     /* 0 = default (4: 1 orchestrator + 3 schedulers); else 2..16 */
  uint32_t pipeline_depth;      /* program mode: runs in flight at once; 0 = default (1, no
                                  pipelining); else 1..SIMPLER_MAX_PIPELINE_DEPTH (docs/api.md) */
  uint64_t task_window_size;    /* ring of in-flight tasks; 0 = default; else power of two >= 4 */
  uint64_t heap_ring_bytes;     /* ring for runtime-allocated outputs; 0 = default; else >= 4096 */
  uint64_t dep_pool_size;       /* dependency edges in flight; 0 = default; else >= 16 */
  uint64_t tensormap_capacity;  /* live tensor-map entries; 0 = default; else >= 16 */
  uint64_t watchdog_timeout_ms; /* no-progress watchdog; 0 = none (default), docs/faults.md */
} SimplerCallConfig;

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_ABI_CHIP_TYPES_H */
