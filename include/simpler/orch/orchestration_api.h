/* simpler — what an orchestration image sees (C ABI plus inline C++ helpers).
 *
 * An orchestration image is a shared object exporting, under the ChipCallable's
 * func_name,
 *     extern "C" int <func_name>(const ChipStorageTaskArgs* args, const SimplerOrchApi* api);
 * It links against nothing of ours: every runtime service comes through `api`, a
 * versioned table. The return value is 0, or a nonzero code that fails the run
 * (SIMPLER_CHIP_ERR_ORCH_FATAL). Tensor args of the entry are already device-resident.
 */
#ifndef SIMPLER_ORCH_ORCHESTRATION_API_H
#define SIMPLER_ORCH_ORCHESTRATION_API_H

#include <stddef.h>
#include <stdint.h>

#include "simpler/abi/chip_types.h"
#include "simpler/kernel/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPLER_ORCH_API_VERSION 1

/* How a task uses one tensor argument. */
typedef enum SimplerTensorMode {
  SIMPLER_TENSOR_IN = 0,        /* read */
  SIMPLER_TENSOR_OUT_ALLOC = 1, /* written; the runtime allocates it (shape/dtype given) */
  SIMPLER_TENSOR_OUT = 2,       /* written into an existing tensor */
  SIMPLER_TENSOR_INOUT = 3,     /* read and written */
  SIMPLER_TENSOR_NODEP = 4      /* passed through, no dependency tracking */
} SimplerTensorMode;

typedef struct SimplerTaskTensor {
  ChipTensor tensor; /* for OUT_ALLOC only ndims/shapes/dtype are read */
  uint32_t mode;     /* SimplerTensorMode */
  uint32_t reserved;
} SimplerTaskTensor;

typedef struct SimplerTaskDesc {
  int32_t func_id;    /* child kernel (ChipCallable func id) */
  uint32_t core_type; /* SimplerCoreType the kernel runs on; SIMPLER_CORE_MIX: a cluster task */
  /* SPMD width, >= 1. A cluster (SIMPLER_CORE_MIX) task: whole clusters, all started
   * together, each running the kernel on its AIC and AIV cores (kernel_abi.h); more than
   * the chip has is refused (SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE). */
  uint32_t block_num;
  uint32_t tensor_count;
  uint32_t scalar_count;
  uint32_t reserved;
  SimplerTaskTensor tensors[CHIP_MAX_TENSOR_ARGS];
  uint64_t scalars[CHIP_MAX_SCALAR_ARGS];
} SimplerTaskDesc;

typedef struct SimplerTaskResult {
  uint64_t task_id; /* 0, 1, 2, ... in submission order within the run (messages use it too) */
  /* outputs[i] is the runtime-allocated tensor for the i-th OUT_ALLOC argument */
  uint32_t output_count;
  uint32_t reserved;
  ChipTensor outputs[CHIP_MAX_TENSOR_ARGS];
} SimplerTaskResult;

typedef enum SimplerLogLevel {
  SIMPLER_LOG_DEBUG = 0,
  SIMPLER_LOG_INFO = 1,
  SIMPLER_LOG_WARN = 2,
  SIMPLER_LOG_ERROR = 3
} SimplerLogLevel;

/* Every function returns 0 or a negative SIMPLER_CHIP_ERR_* status; after an error the
 * run is already failed (latched) and the orchestration should return. */
typedef struct SimplerOrchApi {
  uint32_t version;     /* SIMPLER_ORCH_API_VERSION */
  uint32_t struct_size; /* sizeof(SimplerOrchApi) */
  void* rt;             /* opaque runtime state; pass as first argument */
  int (*submit)(void* rt, const SimplerTaskDesc* desc, SimplerTaskResult* out);
  int (*scope_begin)(void* rt);
  int (*scope_end)(void* rt);
  /* A runtime-allocated intermediate tensor (contiguous), freed when its scope closes
   * and its last user retired. */
  int (*alloc_tensor)(void* rt, uint32_t ndims, const int64_t* shapes, uint32_t dtype,
                      ChipTensor* out);
  /* `after` may not start before `before` completed. `after` is any task of this run
   * not yet released for execution: the latest one, or one still waiting for a producer
   * (SIMPLER_CHIP_ERR_INVALID_ARGS once it was released); `before` precedes it. */
  int (*add_dependency)(void* rt, uint64_t before_task, uint64_t after_task);
  /* Waits for the tasks that write the tensor (only those: unrelated tasks keep running),
   * then copies `size` bytes at element `index`. The tensor must lie in device memory. */
  int (*read_value)(void* rt, const ChipTensor* t, int64_t index, void* out, size_t size);
  /* Ordered like a task that writes the tensor: waits for the tasks that read or write
   * it (NODEP accesses are not tracked, so not waited for), then writes. */
  int (*write_value)(void* rt, const ChipTensor* t, int64_t index, const void* in, size_t size);
  /* Latches SIMPLER_CHIP_ERR_ORCH_FATAL with the message; returns that status. */
  int (*fatal)(void* rt, const char* message);
  void (*log)(void* rt, int32_t level, const char* message);
} SimplerOrchApi;

typedef int (*simpler_orch_entry_fn)(const ChipStorageTaskArgs* args, const SimplerOrchApi* api);

#ifdef __cplusplus
} /* extern "C" */

#include <initializer_list>

namespace simpler::orch {

/* Builder for one task: Task(api, func_id, core).in(a).out_alloc(...).scalar(x).submit().
 * A cluster task: Task(api, func_id, SIMPLER_CORE_MIX, clusters). */
class Task {
 public:
  Task(const SimplerOrchApi* api, int32_t func_id, SimplerCoreType core, uint32_t block_num = 1)
      : api_(api), desc_() {
    desc_.func_id = func_id;
    desc_.core_type = static_cast<uint32_t>(core);
    desc_.block_num = block_num;
  }
  Task& arg(const ChipTensor& t, SimplerTensorMode mode) {
    if (desc_.tensor_count < CHIP_MAX_TENSOR_ARGS) {
      desc_.tensors[desc_.tensor_count].tensor = t;
      desc_.tensors[desc_.tensor_count].mode = static_cast<uint32_t>(mode);
    }
    ++desc_.tensor_count;  // an overflow is reported by submit as INVALID_ARGS
    return *this;
  }
  Task& in(const ChipTensor& t) { return arg(t, SIMPLER_TENSOR_IN); }
  Task& out(const ChipTensor& t) { return arg(t, SIMPLER_TENSOR_OUT); }
  Task& inout(const ChipTensor& t) { return arg(t, SIMPLER_TENSOR_INOUT); }
  Task& nodep(const ChipTensor& t) { return arg(t, SIMPLER_TENSOR_NODEP); }
  Task& out_alloc(std::initializer_list<int64_t> shape, ChipDataType dtype) {
    ChipTensor t{};
    t.ndims = static_cast<uint32_t>(shape.size());
    t.dtype = static_cast<uint32_t>(dtype);
    uint32_t i = 0;
    for (int64_t s : shape)
      if (i < CHIP_TENSOR_MAX_DIMS) t.shapes[i++] = s;
    return arg(t, SIMPLER_TENSOR_OUT_ALLOC);
  }
  Task& scalar_bits(uint64_t bits) {
    if (desc_.scalar_count < CHIP_MAX_SCALAR_ARGS) desc_.scalars[desc_.scalar_count] = bits;
    ++desc_.scalar_count;
    return *this;
  }
  Task& scalar(int64_t v) { return scalar_bits(static_cast<uint64_t>(v)); }
  Task& scalar_f32(float v) {
    uint32_t b;
    __builtin_memcpy(&b, &v, sizeof b);
    return scalar_bits(b);
  }
  /* Returns 0 or the latched error; `result` receives the task id and allocated outputs. */
  int submit(SimplerTaskResult* result) { return api_->submit(api_->rt, &desc_, result); }

 private:
  const SimplerOrchApi* api_;
  SimplerTaskDesc desc_;
};

/* Opens a scope for its lifetime: runtime-allocated tensors of tasks inside it can be
 * reclaimed once it closes and their users retired. */
class Scope {
 public:
  explicit Scope(const SimplerOrchApi* api) : api_(api) { status_ = api_->scope_begin(api_->rt); }
  ~Scope() {
    if (status_ == 0) api_->scope_end(api_->rt);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  int status() const { return status_; }

 private:
  const SimplerOrchApi* api_;
  int status_;
};

}  // namespace simpler::orch
#endif /* __cplusplus */

#endif /* SIMPLER_ORCH_ORCHESTRATION_API_H */
