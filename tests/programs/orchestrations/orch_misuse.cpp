// orch_misuse [INOUT x (float32, >= 1024 elements), SCALAR case]: each case misuses the
// orchestration API in one way and returns the status it got. Children: 0 add_const.
//   1 block_num 0                        -> SIMPLER_CHIP_ERR_INVALID_ARGS
//   2 func_id 9 (not a child)            -> SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND
//   3 scope_end without scope_begin      -> SIMPLER_CHIP_ERR_INVALID_ARGS
//   4 a HOST-space tensor                -> SIMPLER_CHIP_ERR_INVALID_ARGS
//   5 the scalar missing (signature)     -> SIMPLER_CHIP_ERR_INVALID_ARGS
//   6 add_dependency on an older task    -> SIMPLER_CHIP_ERR_INVALID_ARGS
//   7 returns 7 without calling fatal    -> SIMPLER_CHIP_ERR_ORCH_FATAL
//   8 64 distinct writes in one scope    -> SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW (small map)
//   9 OUT_ALLOC where the kernel says INOUT -> SIMPLER_CHIP_ERR_INVALID_ARGS
//  10 a bad submit, then a good one: the good one must return the latched error too
//  11 logs "orch-log-debug" (DEBUG), "orch-log-info" (INFO), "orch-log-error" (ERROR); returns 0
//  12 alloc_tensor with ndims 0             -> SIMPLER_CHIP_ERR_INVALID_ARGS
//  13 read_value past the end of x          -> SIMPLER_CHIP_ERR_INVALID_ARGS
//  15 write_value into host memory (not device memory) -> SIMPLER_CHIP_ERR_INVALID_ARGS,
//     the host bytes untouched
//  16 a task tensor claiming a 1 TiB buffer over x's allocation -> SIMPLER_CHIP_ERR_INVALID_ARGS
//  17 read_value of a tensor whose buffer runs 1 byte past x's allocation -> INVALID_ARGS
//  18 scribbles over the API table it was given (casting const away), returns 0
//  19 a scope-less alloc_tensor first, then 64 scopes each allocating 4 KiB and running a
//     task on it: with a 64 KiB heap ring the scoped blocks must be reclaimed behind the
//     scope-less one (which stays usable: written and read back at the end); returns 0
//  20..23 a task on a 16-element view of x (accepted), then the same view changed in one
//     field so that it leaves x's allocation: 20 start offset one past the end, 21 buffer
//     size one byte past the allocation, 22 start offset -1, 23 stride 100 -> INVALID_ARGS
//     (the submit path's cache of views it already checked must not let any through)
//  24 a task on a scope-less alloc_tensor (freed when the run ends), kept for case 25;
//     returns 0
//  25 (a later run) a task on case 24's tensor, no longer device memory -> INVALID_ARGS
//  27 a task on x as given (no misuse): its submit status
//  14 checks runtime allocations (OUT_ALLOC and alloc_tensor): DEVICE, >= 1024-byte
//     aligned, contiguous with the asked shape, distinct; returns 0 or calls fatal
#include "orch_util.h"

using simpler::orch::Scope;
using simpler::orch::Task;

namespace {
unsigned char g_host_bytes[256];  // host memory an orchestration must not reach via the API
ChipTensor g_stale{};             // case 24's tensor, for case 25
}  // namespace

extern "C" int orch_misuse(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  SimplerTaskResult r, r2;
  switch (args->scalars[0]) {
    case 1:
      return Task(api, 0, SIMPLER_CORE_AIV, 0).inout(x).scalar_f32(1.0f).submit(&r);
    case 2:
      return Task(api, 9, SIMPLER_CORE_AIV).inout(x).scalar_f32(1.0f).submit(&r);
    case 3:
      return api->scope_end(api->rt);
    case 4: {
      ChipTensor host = x;
      host.space = CHIP_SPACE_HOST;
      return Task(api, 0, SIMPLER_CORE_AIV).inout(host).scalar_f32(1.0f).submit(&r);
    }
    case 5:
      return Task(api, 0, SIMPLER_CORE_AIV).inout(x).submit(&r);
    case 6:
      TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                        .inout(test_orch::element_view(x, 0))
                        .scalar_f32(1.0f)
                        .submit(&r));
      TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                        .inout(test_orch::element_view(x, 16))
                        .scalar_f32(1.0f)
                        .submit(&r2));
      TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                        .inout(test_orch::element_view(x, 32))
                        .scalar_f32(1.0f)
                        .submit(&r2));
      return api->add_dependency(api->rt, r.task_id, r2.task_id - 1);
    case 7:
      return 7;
    case 8: {
      Scope scope(api);
      for (int64_t i = 0; i < 64; ++i) {
        TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                          .inout(test_orch::element_view(x, 16 * i))
                          .scalar_f32(1.0f)
                          .submit(&r));
      }
      return 0;
    }
    case 9:
      return Task(api, 0, SIMPLER_CORE_AIV)
          .out_alloc({4}, CHIP_DT_FLOAT32)
          .scalar_f32(1.0f)
          .submit(&r);
    case 10: {
      (void)Task(api, 0, SIMPLER_CORE_AIV, 0).inout(x).scalar_f32(1.0f).submit(&r);
      return Task(api, 0, SIMPLER_CORE_AIV).inout(x).scalar_f32(1.0f).submit(&r);
    }
    case 11:
      api->log(api->rt, SIMPLER_LOG_DEBUG, "orch-log-debug");
      api->log(api->rt, SIMPLER_LOG_INFO, "orch-log-info");
      api->log(api->rt, SIMPLER_LOG_ERROR, "orch-log-error");
      return 0;
    case 12: {
      ChipTensor t;
      const int64_t shape[1] = {4};
      return api->alloc_tensor(api->rt, 0, shape, CHIP_DT_FLOAT32, &t);
    }
    case 13: {
      float v;
      return api->read_value(api->rt, &x, x.shapes[0], &v, sizeof v);
    }
    case 14: {
      Scope scope(api);
      TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(x).scalar_f32(1.0f).submit(&r));
      if (r.output_count != 0)
        return api->fatal(api->rt, "case 14: output_count of a task without OUT_ALLOC");
      ChipTensor a, b;
      const int64_t shape[2] = {3, 5};
      TEST_ORCH_TRY(api->alloc_tensor(api->rt, 2, shape, CHIP_DT_FLOAT32, &a));
      TEST_ORCH_TRY(api->alloc_tensor(api->rt, 2, shape, CHIP_DT_FLOAT32, &b));
      const ChipTensor* all[2] = {&a, &b};
      for (const ChipTensor* t : all) {
        if (t->space != CHIP_SPACE_DEVICE || t->buffer.addr % 1024 != 0 || t->buffer.size != 60 ||
            t->ndims != 2 || t->shapes[0] != 3 || t->shapes[1] != 5 || t->strides[0] != 5 ||
            t->strides[1] != 1 || t->start_offset != 0) {
          return api->fatal(api->rt, "case 14: alloc_tensor returned a bad tensor");
        }
      }
      if (a.buffer.addr == b.buffer.addr)
        return api->fatal(api->rt, "case 14: two live allocations share memory");
      return 0;
    }
    case 15: {
      ChipTensor t = x;
      t.buffer.addr = reinterpret_cast<uint64_t>(g_host_bytes);
      t.buffer.size = sizeof g_host_bytes;
      t.start_offset = 0;
      t.shapes[0] = 16;
      const float v = 42.0f;
      const int rc = api->write_value(api->rt, &t, 0, &v, sizeof v);
      for (unsigned char b : g_host_bytes)
        if (b != 0) return api->fatal(api->rt, "case 15: write_value wrote into host memory");
      return rc;
    }
    case 16: {
      ChipTensor t = x;
      t.buffer.size = uint64_t{1} << 40;
      return Task(api, 0, SIMPLER_CORE_AIV).inout(t).scalar_f32(1.0f).submit(&r);
    }
    case 17: {
      ChipTensor t = x;
      t.buffer.size += 1;
      float v;
      return api->read_value(api->rt, &t, 0, &v, sizeof v);
    }
    case 18: {
      auto* table = const_cast<SimplerOrchApi*>(api);
      table->submit = nullptr;
      table->read_value = nullptr;
      table->rt = nullptr;
      return 0;
    }
    case 19: {
      ChipTensor top;
      const int64_t top_shape[1] = {256};
      TEST_ORCH_TRY(api->alloc_tensor(api->rt, 1, top_shape, CHIP_DT_FLOAT32, &top));
      for (int i = 0; i < 64; ++i) {
        Scope scope(api);
        TEST_ORCH_TRY(scope.status());
        ChipTensor t;
        const int64_t shape[1] = {1024};
        TEST_ORCH_TRY(api->alloc_tensor(api->rt, 1, shape, CHIP_DT_FLOAT32, &t));
        TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(t).scalar_f32(1.0f).submit(&r));
      }
      const float v = 7.0f;
      float back = 0.0f;
      TEST_ORCH_TRY(api->write_value(api->rt, &top, 255, &v, sizeof v));
      TEST_ORCH_TRY(api->read_value(api->rt, &top, 255, &back, sizeof back));
      if (back != 7.0f) return api->fatal(api->rt, "case 19: the scope-less tensor lost its value");
      return 0;
    }
    case 20:
    case 21:
    case 22:
    case 23: {
      ChipTensor v = test_orch::element_view(x, 0);
      v.shapes[0] = 16;
      TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(v).scalar_f32(1.0f).submit(&r));
      const int64_t elements = static_cast<int64_t>(x.buffer.size / sizeof(float));
      if (args->scalars[0] == 20) v.start_offset = elements - 15;
      if (args->scalars[0] == 21) v.buffer.size += 1;
      if (args->scalars[0] == 22) v.start_offset = -1;
      if (args->scalars[0] == 23) v.strides[0] = 100;
      return Task(api, 0, SIMPLER_CORE_AIV).inout(v).scalar_f32(1.0f).submit(&r2);
    }
    case 24: {
      const int64_t shape[1] = {256};
      TEST_ORCH_TRY(api->alloc_tensor(api->rt, 1, shape, CHIP_DT_FLOAT32, &g_stale));
      return Task(api, 0, SIMPLER_CORE_AIV).inout(g_stale).scalar_f32(1.0f).submit(&r);
    }
    case 25:
      return Task(api, 0, SIMPLER_CORE_AIV).inout(g_stale).scalar_f32(1.0f).submit(&r);
    case 27:
      return Task(api, 0, SIMPLER_CORE_AIV).inout(x).scalar_f32(1.0f).submit(&r);
    case 26: {  // case 20's first view at rank 0: the view cache's leftovers must not match
      ChipTensor v = test_orch::element_view(x, 0);
      v.shapes[0] = 16;
      v.ndims = 0;
      return Task(api, 0, SIMPLER_CORE_AIV).inout(v).scalar_f32(1.0f).submit(&r);
    }
    default:
      return api->fatal(api->rt, "orch_misuse: unknown case");
  }
}
