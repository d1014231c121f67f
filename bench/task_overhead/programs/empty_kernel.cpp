// The empty kernel of the per-task overhead benchmark: the task costs nothing to run, so
// what is measured is the runtime's own cost per task.
#include "simpler/kernel/kernel_abi.h"

extern "C" __attribute__((visibility("default"))) void kernel_entry(int64_t* args) { (void)args; }
