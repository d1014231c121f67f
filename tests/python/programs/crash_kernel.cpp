// Signature [INOUT x(float32), SCALAR how]: how 0 NULL dereference, 1 abort(), 2 integer
// division by zero, 3 never returns (sleeps forever), anything else x[0] += 1.
#include <stdlib.h>
#include <unistd.h>

#include "simpler/kernel/kernel_abi.h"

static volatile int g_zero = 0;
static volatile int g_seven = 7;
static int* volatile g_null = 0;

extern "C" void kernel_entry(int64_t* args) {
  float* x = (float*)simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(float));
  switch (simpler_scalar_i64(args, 1)) {
    case 0:
      *g_null = 1;
      break;
    case 1:
      abort();
    case 2:
      x[0] += (float)(g_seven / g_zero);
      break;
    case 3:
      for (;;) sleep(1);
    default:
      x[0] += 1.0f;
  }
}
