// Kernel fault: reports fault code 42 and leaves its tensor alone. Signature [INOUT x].
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) { simpler_kernel_fail(args, 42); }
