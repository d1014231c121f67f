// A cluster (MIX) kernel: every part waits (sleeping 1 ms between looks, at most ~20 s)
// until the int32 flag in tensor 0 becomes nonzero; the AIC part then copies it into
// tensor 1's first int32. Cluster parts run on the engine's helper threads, never on the
// orchestrating thread, so this may wait for what the orchestration does after the submit.
#include <unistd.h>

#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  volatile int32_t* flag = (volatile int32_t*)simpler_tensor_data(simpler_tensor_arg(args, 0), 4);
  for (int i = 0; i < 20000 && *flag == 0; ++i) usleep(1000);
  if (*flag == 0) {
    simpler_kernel_fail(args, 7);
    return;
  }
  if (simpler_core_type(args) == SIMPLER_CORE_AIC) {
    *(int32_t*)simpler_tensor_data(simpler_tensor_arg(args, 1), 4) = *flag;
  }
}
