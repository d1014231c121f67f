// Entry [IN x, OUT y, SCALAR s] that always reports a fatal error (named run status).
#include "simpler/orch/orchestration_api.h"

extern "C" int fatal_entry(const ChipStorageTaskArgs*, const SimplerOrchApi* api) {
  return api->fatal(api->rt, "fatal_entry: failing on purpose");
}
