// C entry points: fault injection and call counters (test hooks).
#include "api_support.h"

using simpler::sim::Driver;
using simpler::sim::guarded;
using simpler::sim::operation_from_name;

extern "C" {

int sim_inject_fault(const char* op, int32_t count, int32_t status) {
  return guarded([&] {
    if (op == nullptr || count < 0) return SIM_ERR_INVALID_VALUE;
    const auto operation = operation_from_name(op);
    if (!operation) return SIM_ERR_UNKNOWN_OPERATION;
    Driver::instance().stats().inject(*operation, count,
                                      status == SIMPLER_OK ? SIM_ERR_INJECTED_FAULT : status);
    return SIMPLER_OK;
  });
}

int sim_clear_faults(void) {
  return guarded([&] {
    Driver::instance().stats().clear_faults();
    return SIMPLER_OK;
  });
}

int sim_call_count(const char* op, uint64_t* out_count) {
  return guarded([&] {
    if (op == nullptr || out_count == nullptr) return SIM_ERR_INVALID_VALUE;
    const auto operation = operation_from_name(op);
    if (!operation) return SIM_ERR_UNKNOWN_OPERATION;
    *out_count = Driver::instance().stats().calls(*operation);
    return SIMPLER_OK;
  });
}

int sim_reset_counters(void) {
  return guarded([&] {
    Driver::instance().stats().reset_counters();
    return SIMPLER_OK;
  });
}

}  // extern "C"
