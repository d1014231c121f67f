/* simpler — what a kernel sees (C, header-only; kernels link against nothing of ours).
 *
 * A kernel image is a shared object compiled for the simulator that exports
 *     extern "C" void kernel_entry(int64_t* args);
 * args[i] (i < tensor count) is the address of the i-th tensor's ChipTensor descriptor;
 * the scalars (64-bit bit patterns) follow the tensors. args[-1] holds the address of a
 * SimplerKernelContext with the SPMD block index and count of this launch.
 */
#ifndef SIMPLER_KERNEL_KERNEL_ABI_H
#define SIMPLER_KERNEL_KERNEL_ABI_H

#include <stdint.h>
#include <string.h>

#include "simpler/abi/chip_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum SimplerCoreType { SIMPLER_CORE_AIC = 0, SIMPLER_CORE_AIV = 1 } SimplerCoreType;

typedef struct SimplerKernelContext {
  uint32_t block_idx; /* 0..block_num-1 */
  uint32_t block_num; /* SPMD width of the task */
  uint32_t core_type; /* SimplerCoreType of the executing core */
  uint32_t core_id;   /* index of the executing core within its type */
  int32_t* fault;     /* a kernel may store a nonzero code here to fail the run */
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

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_KERNEL_KERNEL_ABI_H */
