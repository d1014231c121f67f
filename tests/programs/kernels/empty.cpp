// Kernel empty: does nothing (per-task overhead benchmarks). Any signature.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) { (void)args; }
