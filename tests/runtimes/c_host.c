/* A C host of the runtime ABI: proves that the C ABI headers compile as C11 (docs/api.md)
 * and drives the version handshake, a context's life and the thread's last error from C. */
#include <stdio.h>

#include "simpler/abi/runtime_abi.h"
#include "simpler/kernel/kernel_abi.h"
#include "simpler/orch/orchestration_api.h"

/* Returns the status of destroying the context a second time (it must be refused) and
 * copies that call's message; any earlier failure returns its own status. */
int c_host_double_destroy(SimplerGetApiFn get, char* message, size_t message_size) {
  const SimplerApi* api = NULL;
  int rc = get(SIMPLER_API_MAJOR, SIMPLER_API_MINOR, &api, NULL);
  if (rc != SIMPLER_OK) return rc;
  SimplerContextCreateArgs create = {SIMPLER_CONTEXT_CREATE_ARGS_STRUCT_SIZE, NULL};
  if ((rc = api->context_create(&create)) != SIMPLER_OK) return rc;
  SimplerContextDestroyArgs destroy = {SIMPLER_CONTEXT_DESTROY_ARGS_STRUCT_SIZE, create.ctx};
  if ((rc = api->context_destroy(&destroy)) != SIMPLER_OK) return rc;
  rc = api->context_destroy(&destroy);
  SimplerLastErrorArgs last = {SIMPLER_LAST_ERROR_ARGS_STRUCT_SIZE, 0, NULL};
  if (api->last_error(&last) != SIMPLER_OK || last.status != rc) return PTO_RUNTIME_ERR_INTERNAL;
  snprintf(message, message_size, "%s", last.message);
  return rc;
}
