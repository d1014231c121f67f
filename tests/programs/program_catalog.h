// simpler test programs — ready-made ChipCallables for the runtime and worker tests.
//
// Link `simpler_test_programs` (CMake target from tests/programs). The images are built
// by tests/programs/CMakeLists.txt; test_programs.h (generated in its build dir) holds
// their absolute paths as simpler::test_programs::paths::<image> (kernel_<name>,
// orch_<name>). Each function below reads the images and builds the callable; errors
// throw std::runtime_error naming the path.
//
// Entry signature and semantics of each program (float32 unless said otherwise):
//   vector_add()     [IN a, IN b, OUT c]             c = a + b (one AIV task)
//   add_scalar()     [IN x, OUT y, SCALAR s(f32)]    y = x + s (one AIV task; kernel mode)
//   dag()            [IN a, IN b, OUT f]             f = (a+b+1)(a+b+2)+(a+b), 1-D, nested
//                                                    scopes, runtime-allocated intermediates
//   nested_scopes()  [INOUT x, SCALAR outer(i64), SCALAR inner(i64)]
//                                                    per outer iteration x = 2x + 1 + inner
//   matmul()         [IN A, IN B, OUT C]             C = A B, 2-D, extents multiples of 64
//                                                    (AIC tile GEMMs + AIV INOUT accumulates)
//   spmd()           [OUT y(int32, 1-D), SCALAR block_num, SCALAR core_type(0 AIC,1 AIV)]
//                                                    block b writes b into slice b of y
//   fatal()          [INOUT x]                       submits x += 1, then fatal()
//   ring_deadlock()  [IN x(1-D), SCALAR n]           one scope with n OUT_ALLOC tasks
//   kernel_fault()   [INOUT x]                       a kernel reports fault 42, three
//                                                    dependent x += 1 tasks are skipped
//   sleep()          [INOUT x, SCALAR ms]            one kernel sleeps ms, then x[0] += 1
//   pipeline()       [INOUT x, INOUT y, SCALAR mode, SCALAR ms]  one task after ms: mode 0
//                                                    x[0] += 1, 1 y = x, 2 x = y (1-D)
//   crash()          [INOUT x, SCALAR how, SCALAR who]  x += 1, then a kernel (who 0) or
//                                                    the orchestration (who 1) faults:
//                                                    how 0 NULL deref, 1 abort(), 2 / 0,
//                                                    3 never returns (orch_crash.cpp)
//   values()         [INOUT x, OUT y] (>= 2 elems)   write/read_value around y = x + 1;
//                                                    ends with x[0] = 5, y[0] = 6, y[1] = 12
//   explicit_dep()   [INOUT x, OUT y, SCALAR ms]     y = x after a slow x[0] += 1, ordered
//                                                    only by add_dependency
//   misuse()         [INOUT x(>= 1024 elems), SCALAR case]  API misuse cases (see
//                                                    orchestrations/orch_misuse.cpp)
//   many_args()      [INOUT x0..x5, SCALAR s0..s9(i64)]  x_i[0] = sum(s) + i by
//                                                    write_value (launch-record spill path)
//   cluster()        [IN x, OUT y, SCALAR block_num, SCALAR mode]  one cluster (MIX) task
//                                                    of block_num clusters; mode 0: y = 2x+1
//                                                    through the cluster buffer and flags
//                                                    (kernels/cluster_exchange.cpp)
//   cluster_outside() [IN x, OUT y(>= 3)]           cluster_exchange as a plain AIV task:
//                                                    y[0..2] = barrier, set_flag, wait_flag
//   cluster_stream() [IN x, OUT y, INOUT s(2 * singles), SCALAR singles, SCALAR ms,
//                     SCALAR block_num]               singles sleep tasks, a cluster task
//                                                    (y = 2x+1), singles more sleep tasks
//   fan_out()        [INOUT c(int32, >= 2), SCALAR n, SCALAR ms]  n independent tasks
//                                                    (AIC, AIV alternately) each sleeping ms
//                                                    (ms < 0: busy for -ms µs);
//                                                    c[1] = the most that ran at once
//   chain_tally()    [OUT y(int32, >= 48), INOUT c(int32, >= 2), SCALAR n]
//                                                    a 48-block SPMD task, then a chain of n
//                                                    tasks; c[0] = n, c[1] = how many ran
//                                                    on a thread other than the
//                                                    orchestrating one
//   cluster_then()   [IN x, OUT y, SCALAR mode]     a cluster task (cluster_exchange in
//                                                    `mode`; 4: y = 2x+1 after 50 ms), then
//                                                    y[0] += 1 by a task depending on it
//   cluster_fan()    [IN x, OUT y, INOUT c(int32, >= 2), SCALAR n, SCALAR ms]  a 50 ms
//                                                    cluster task (y = 2x+1), then n
//                                                    independent tasks after it (ms each);
//                                                    c[1] = the most of them at once
//   bench()          [INOUT scratch(>= 1024 elems), SCALAR pattern, SCALAR tasks,
//                     SCALAR param]                  empty-kernel task patterns for the
//                                                    per-task overhead benchmarks (see
//                                                    orchestrations/orch_bench.cpp)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simpler/task/task_interface.h"
#include "test_programs.h"

namespace simpler::test_programs {

// The bytes of a file; throws std::runtime_error naming the path.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// A CoreCallable from a kernel image file.
CoreCallable kernel_callable(const std::string& kernel_path,
                             const std::vector<ArgDirection>& signature);

// A ChipCallable from an orchestration image file and its children (func id, kernel).
ChipCallable chip_callable(const std::string& orchestration_path, const std::string& func_name,
                           const std::vector<ArgDirection>& signature,
                           const std::vector<std::pair<int32_t, CoreCallable>>& children);

ChipCallable vector_add();
ChipCallable add_scalar();
ChipCallable dag();
ChipCallable nested_scopes();
ChipCallable matmul();
ChipCallable spmd();
ChipCallable fatal();
ChipCallable ring_deadlock();
ChipCallable kernel_fault();
ChipCallable sleep();
ChipCallable cluster();
ChipCallable cluster_outside();
ChipCallable cluster_stream();
ChipCallable crash();
ChipCallable pipeline();
ChipCallable values();
ChipCallable explicit_dep();
ChipCallable misuse();
ChipCallable bench();
ChipCallable many_args();
ChipCallable fan_out();
ChipCallable chain_tally();
ChipCallable cluster_then();
ChipCallable cluster_fan();

}  // namespace simpler::test_programs
