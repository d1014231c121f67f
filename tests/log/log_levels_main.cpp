// Logs one line per level through the default sink; tests/log/CMakeLists.txt runs it under
// several SIMPLER_LOG_LEVEL values and checks what reaches stderr.
#include "simpler/log/log.h"

int main() {
  simpler_log(SIMPLER_LOG_LEVEL_DEBUG, "probe", "line-%s", "debug");
  simpler_log(SIMPLER_LOG_LEVEL_INFO, "probe", "line-%s", "info");
  simpler_log(SIMPLER_LOG_LEVEL_WARNING, "probe", "line-%s", "warning");
  simpler_log(SIMPLER_LOG_LEVEL_ERROR, "probe", "line-%s", "error");
  return 0;
}
