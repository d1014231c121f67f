/* simpler — status codes shared by every layer (C, header-only).
 *
 * Three bands that never overlap:
 *   0                 success
 *   1                 SIMPLER_NOT_READY (a poll/query that found work still pending; not an error)
 *   -1 .. -999        errors latched on the chip during a run (SIMPLER_CHIP_ERR_*)
 *   -1000 .. -1099    host runtime statuses (PTO_RUNTIME_ERR_*; values frameworks already check)
 *   -2000 .. -2099    simulated driver statuses (SIM_ERR_*)
 */
#ifndef SIMPLER_ABI_STATUS_H
#define SIMPLER_ABI_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPLER_OK 0
#define SIMPLER_NOT_READY 1

/* Chip band: errors latched during a run, reported negated. */
/* -1 orchestration called fatal(); -2 a task or entry argument was malformed; -3 a scope
 * holds more than a ring can ever hold; -4 more live tensor-map entries than its capacity;
 * -5 the no-progress watchdog fired; -6 a kernel reported or caused a detectable fault;
 * -7 the orchestration image could not be loaded; -8 a task named a func id that the
 * callable lacks; -9 a driver operation failed during the run. */
#define SIMPLER_CHIP_ERR_ORCH_FATAL (-1)
#define SIMPLER_CHIP_ERR_INVALID_ARGS (-2)
#define SIMPLER_CHIP_ERR_RING_DEADLOCK (-3)
#define SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW (-4)
#define SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT (-5)
#define SIMPLER_CHIP_ERR_KERNEL_FAULT (-6)
#define SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED (-7)
#define SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND (-8)
#define SIMPLER_CHIP_ERR_DEVICE_FAULT (-9)

/* Host band. */
#define PTO_RUNTIME_ERR_BASE (-1000)
#define PTO_RUNTIME_ERR_INTERNAL (PTO_RUNTIME_ERR_BASE)
#define PTO_RUNTIME_ERR_UNSUPPORTED (PTO_RUNTIME_ERR_BASE - 1)
#define PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE (PTO_RUNTIME_ERR_BASE - 2)
#define PTO_RUNTIME_ERR_INVALID_STATE (PTO_RUNTIME_ERR_BASE - 3)
#define PTO_RUNTIME_ERR_INVALID_ARGUMENT (PTO_RUNTIME_ERR_BASE - 4)
#define PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED (PTO_RUNTIME_ERR_BASE - 5)
#define PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED (PTO_RUNTIME_ERR_BASE - 6)
#define PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT (PTO_RUNTIME_ERR_BASE - 7)
#define PTO_RUNTIME_ERR_CAPACITY_EXCEEDED (PTO_RUNTIME_ERR_BASE - 8)
#define PTO_RUNTIME_ERR_TIMEOUT (PTO_RUNTIME_ERR_BASE - 9) /* a bounded wait expired */

/* Simulated driver band. */
#define SIM_ERR_BASE (-2000)
#define SIM_ERR_INVALID_VALUE (SIM_ERR_BASE - 1)   /* null/zero/out-of-range argument */
#define SIM_ERR_INVALID_DEVICE (SIM_ERR_BASE - 2)  /* device id out of range */
#define SIM_ERR_NO_DEVICE (SIM_ERR_BASE - 3)       /* no current device on this thread */
#define SIM_ERR_OUT_OF_MEMORY (SIM_ERR_BASE - 4)   /* device arena exhausted */
#define SIM_ERR_INVALID_POINTER (SIM_ERR_BASE - 5) /* foreign, interior or freed device pointer */
#define SIM_ERR_OUT_OF_RANGE (SIM_ERR_BASE - 6)    /* copy/set runs past an allocation */
#define SIM_ERR_INVALID_HANDLE (SIM_ERR_BASE - 7)  /* unknown or destroyed stream/event */
#define SIM_ERR_WRONG_DEVICE (SIM_ERR_BASE - 8)    /* handle belongs to another device */
#define SIM_ERR_INJECTED_FAULT (SIM_ERR_BASE - 9)  /* default status of an injected fault */
#define SIM_ERR_ALREADY_INITIALIZED (SIM_ERR_BASE - 10) /* configure after a device was used */
#define SIM_ERR_UNKNOWN_OPERATION (SIM_ERR_BASE - 11)   /* fault-injection/counter name not known */
#define SIM_ERR_BUSY (SIM_ERR_BASE - 12)                /* resource still has pending work */

/* Name of any status, e.g. "PTO_RUNTIME_ERR_INVALID_STATE". Never NULL. */
static inline const char* simpler_status_name(int status) {
  switch (status) {
    case SIMPLER_OK:
      return "SIMPLER_OK";
    case SIMPLER_NOT_READY:
      return "SIMPLER_NOT_READY";
    case SIMPLER_CHIP_ERR_ORCH_FATAL:
      return "SIMPLER_CHIP_ERR_ORCH_FATAL";
    case SIMPLER_CHIP_ERR_INVALID_ARGS:
      return "SIMPLER_CHIP_ERR_INVALID_ARGS";
    case SIMPLER_CHIP_ERR_RING_DEADLOCK:
      return "SIMPLER_CHIP_ERR_RING_DEADLOCK";
    case SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW:
      return "SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW";
    case SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT:
      return "SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT";
    case SIMPLER_CHIP_ERR_KERNEL_FAULT:
      return "SIMPLER_CHIP_ERR_KERNEL_FAULT";
    case SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED:
      return "SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED";
    case SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND:
      return "SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND";
    case SIMPLER_CHIP_ERR_DEVICE_FAULT:
      return "SIMPLER_CHIP_ERR_DEVICE_FAULT";
    case PTO_RUNTIME_ERR_INTERNAL:
      return "PTO_RUNTIME_ERR_INTERNAL";
    case PTO_RUNTIME_ERR_UNSUPPORTED:
      return "PTO_RUNTIME_ERR_UNSUPPORTED";
    case PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE:
      return "PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE";
    case PTO_RUNTIME_ERR_INVALID_STATE:
      return "PTO_RUNTIME_ERR_INVALID_STATE";
    case PTO_RUNTIME_ERR_INVALID_ARGUMENT:
      return "PTO_RUNTIME_ERR_INVALID_ARGUMENT";
    case PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED:
      return "PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED";
    case PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED:
      return "PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED";
    case PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT:
      return "PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT";
    case PTO_RUNTIME_ERR_CAPACITY_EXCEEDED:
      return "PTO_RUNTIME_ERR_CAPACITY_EXCEEDED";
    case PTO_RUNTIME_ERR_TIMEOUT:
      return "PTO_RUNTIME_ERR_TIMEOUT";
    case SIM_ERR_INVALID_VALUE:
      return "SIM_ERR_INVALID_VALUE";
    case SIM_ERR_INVALID_DEVICE:
      return "SIM_ERR_INVALID_DEVICE";
    case SIM_ERR_NO_DEVICE:
      return "SIM_ERR_NO_DEVICE";
    case SIM_ERR_OUT_OF_MEMORY:
      return "SIM_ERR_OUT_OF_MEMORY";
    case SIM_ERR_INVALID_POINTER:
      return "SIM_ERR_INVALID_POINTER";
    case SIM_ERR_OUT_OF_RANGE:
      return "SIM_ERR_OUT_OF_RANGE";
    case SIM_ERR_INVALID_HANDLE:
      return "SIM_ERR_INVALID_HANDLE";
    case SIM_ERR_WRONG_DEVICE:
      return "SIM_ERR_WRONG_DEVICE";
    case SIM_ERR_INJECTED_FAULT:
      return "SIM_ERR_INJECTED_FAULT";
    case SIM_ERR_ALREADY_INITIALIZED:
      return "SIM_ERR_ALREADY_INITIALIZED";
    case SIM_ERR_UNKNOWN_OPERATION:
      return "SIM_ERR_UNKNOWN_OPERATION";
    case SIM_ERR_BUSY:
      return "SIM_ERR_BUSY";
    default:
      break;
  }
  if (status < 0 && status > PTO_RUNTIME_ERR_BASE) return "SIMPLER_CHIP_ERR_UNKNOWN";
  if (status <= PTO_RUNTIME_ERR_BASE && status > PTO_RUNTIME_ERR_BASE - 100)
    return "PTO_RUNTIME_ERR_UNKNOWN";
  if (status <= SIM_ERR_BASE && status > SIM_ERR_BASE - 100) return "SIM_ERR_UNKNOWN";
  return "SIMPLER_STATUS_UNKNOWN";
}

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_ABI_STATUS_H */
