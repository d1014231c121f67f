/* C callers of the driver: proves sim_driver.h compiles as C and lets the C++ tests pass
 * enum values a C caller can pass but C++ cannot form without undefined behaviour. */
#include "simpler/sim/sim_driver.h"

int memcpy_with_raw_kind(void* dst, const void* src, size_t size, int kind) {
  return sim_memcpy(dst, src, size, (SimMemcpyKind)kind);
}

int memcpy_async_with_raw_kind(void* dst, const void* src, size_t size, int kind,
                               sim_stream_t stream) {
  return sim_memcpy_async(dst, src, size, (SimMemcpyKind)kind, stream);
}
