/* simpler — what a kernel sees (C, header-only; kernels link against nothing of ours).
 *
 * A kernel image is a shared object compiled for the simulator that exports
 *     extern "C" void kernel_entry(int64_t* args);
 * args[i] (i < tensor count) is the address of the i-th tensor's ChipTensor descriptor;
 * the scalars (64-bit bit patterns) follow the tensors. args[-1] holds the address of a
 * SimplerKernelContext with the SPMD block index and count of this launch.
 *
 * Cluster (MIX) tasks: a task submitted with core_type SIMPLER_CORE_MIX takes whole
 * clusters (1 AIC + 2 AIV cores each) and runs its kernel on every core of them, all
 * started together. Each run of the kernel is one *part*: context->core_type says AIC or
 * AIV, context->cluster (non-NULL only in a cluster task) gives the cluster-local buffer
 * and the flag/barrier operations through which the parts hand tiles to each other.
 */
#ifndef SIMPLER_KERNEL_KERNEL_ABI_H
#define SIMPLER_KERNEL_KERNEL_ABI_H

#include <stdint.h>
#include <string.h>

#include "simpler/abi/chip_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum SimplerCoreType {
  SIMPLER_CORE_AIC = 0, /* cube core */
  SIMPLER_CORE_AIV = 1, /* vector core */
  SIMPLER_CORE_MIX = 2  /* a task type only: whole clusters (their AIC and AIV cores) */
} SimplerCoreType;

/* Cores of one cluster of the simulated chip. */
#define SIMPLER_CLUSTER_AIC_CORES 1
#define SIMPLER_CLUSTER_AIV_CORES 2
/* Bytes of the buffer each cluster's parts share (like an on-chip L1/UB tile buffer). */
#define SIMPLER_CLUSTER_BUFFER_BYTES (512u * 1024u)
/* Flags 0..SIMPLER_CLUSTER_FLAG_COUNT-1 per cluster. */
#define SIMPLER_CLUSTER_FLAG_COUNT 16u

/* What one part of a cluster (MIX) task sees of its cluster. The operations park the
 * calling core (no spinning) and return 0, or a negative SIMPLER_CHIP_ERR_* status when
 * the wait can never end: every other part of the cluster already returned or waits too
 * (a deadlock: the run fails with SIMPLER_CHIP_ERR_KERNEL_FAULT naming the parts and
 * flags), or the run failed elsewhere. On a nonzero status the kernel should return. */
typedef struct SimplerClusterOps {
  void* cluster;         /* opaque; pass as first argument */
  void* buffer;          /* SIMPLER_CLUSTER_BUFFER_BYTES, shared by this cluster's parts; */
  uint64_t buffer_bytes; /* its contents are undefined when the task starts */
  uint32_t cluster_id;   /* which cluster of the chip */
  uint32_t aiv_idx;      /* AIV parts: 0..aiv_num-1; the AIC part: 0 */
  uint32_t aiv_num;      /* AIV parts in the cluster (SIMPLER_CLUSTER_AIV_CORES) */
  uint32_t reserved;
  /* Waits until every part of this cluster called barrier (a reusable barrier). */
  int (*barrier)(void* cluster);
  /* Counting flags: set adds 1 to the flag and wakes its waiters; wait waits until the
   * flag is above 0 and takes 1. To hand one tile to both AIV parts, set the flag twice
   * (or use one flag per AIV part). */
  int (*set_flag)(void* cluster, uint32_t flag);
  int (*wait_flag)(void* cluster, uint32_t flag);
} SimplerClusterOps;

typedef struct SimplerKernelContext {
  uint32_t block_idx; /* 0..block_num-1 */
  uint32_t block_num; /* SPMD width of the task */
  uint32_t core_type; /* SimplerCoreType of the executing core */
  uint32_t core_id;   /* index of the executing core within its type */
  int32_t* fault;     /* a kernel may store a nonzero code here to fail the run */
  /* A part of a cluster (MIX) task: its cluster; NULL for AIC/AIV tasks. */
  const SimplerClusterOps* cluster;
} SimplerKernelContext;

typedef void (*simpler_kernel_entry_fn)(int64_t* args);
#define SIMPLER_KERNEL_ENTRY_SYMBOL "kernel_entry"

static inline const SimplerKernelContext* simpler_kernel_context(const int64_t* args) {
  return (const SimplerKernelContext*)(intptr_t)args[-1];
}
static inline uint32_t simpler_block_idx(const int64_t* args) {
  return simpler_kernel_context(args)->block_idx;
}
static inline uint32_t simpler_block_num(const int64_t* args) {
  return simpler_kernel_context(args)->block_num;
}
static inline const ChipTensor* simpler_tensor_arg(const int64_t* args, int i) {
  return (const ChipTensor*)(intptr_t)args[i];
}
/* First element of a tensor: buffer.addr + start_offset elements. */
static inline void* simpler_tensor_data(const ChipTensor* t, size_t elem_size) {
  return (void*)(intptr_t)(t->buffer.addr + (uint64_t)t->start_offset * elem_size);
}
static inline int64_t simpler_scalar_i64(const int64_t* args, int i) { return args[i]; }
static inline double simpler_scalar_f64(const int64_t* args, int i) {
  double d;
  memcpy(&d, &args[i], sizeof d);
  return d;
}
/* Scalars packed from a float32 use the low 32 bits. */
static inline float simpler_scalar_f32(const int64_t* args, int i) {
  uint32_t bits = (uint32_t)(uint64_t)args[i];
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static inline void simpler_kernel_fail(const int64_t* args, int32_t code) {
  const SimplerKernelContext* c = simpler_kernel_context(args);
  if (c->fault) *c->fault = code ? code : 1;
}

/* Cluster (MIX) tasks; see SimplerClusterOps. simpler_cluster is NULL outside one. */
static inline const SimplerClusterOps* simpler_cluster(const int64_t* args) {
  return simpler_kernel_context(args)->cluster;
}
static inline uint32_t simpler_core_type(const int64_t* args) {
  return simpler_kernel_context(args)->core_type;
}
static inline void* simpler_cluster_buffer(const int64_t* args) {
  const SimplerClusterOps* c = simpler_cluster(args);
  return c ? c->buffer : NULL; /* NOLINT(modernize-use-nullptr): this header is also C */
}
/* These return 0, or a negative status (the run failed; return from the kernel). Outside a
 * cluster task they fail the run with a fault and return -1. */
static inline int simpler_cluster_barrier(const int64_t* args) {
  const SimplerClusterOps* c = simpler_cluster(args);
  if (!c) return simpler_kernel_fail(args, 1), -1;
  return c->barrier(c->cluster);
}
static inline int simpler_cluster_set_flag(const int64_t* args, uint32_t flag) {
  const SimplerClusterOps* c = simpler_cluster(args);
  if (!c) return simpler_kernel_fail(args, 1), -1;
  return c->set_flag(c->cluster, flag);
}
static inline int simpler_cluster_wait_flag(const int64_t* args, uint32_t flag) {
  const SimplerClusterOps* c = simpler_cluster(args);
  if (!c) return simpler_kernel_fail(args, 1), -1;
  return c->wait_flag(c->cluster, flag);
}

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_KERNEL_KERNEL_ABI_H */
