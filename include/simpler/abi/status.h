/* simpler — status codes shared by every layer (C, header-only).
 *
 * SIMPLER_STATUS_LIST is the one list of statuses: every name, value and meaning is
 * written here once. The C/C++ constants (an enum), simpler_status_name(), the Python
 * constants and simpler.errors.status_name() are all generated from it.
 *
 * Three bands that never overlap:
 *   0                 success
 *   1                 SIMPLER_NOT_READY (a poll/query that found work still pending; not an error)
 *   -1 .. -999        errors latched on the chip during a run (SIMPLER_CHIP_ERR_*)
 *   -1000 .. -1099    host runtime statuses (PTO_RUNTIME_ERR_*; values frameworks already check)
 *   -2000 .. -2099    simulated driver statuses (SIM_ERR_*)
 * New statuses go at the end of their band; a value is never reused.
 */
#ifndef SIMPLER_ABI_STATUS_H
#define SIMPLER_ABI_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Band bases (not statuses of their own: PTO_RUNTIME_ERR_BASE == PTO_RUNTIME_ERR_INTERNAL). */
#define PTO_RUNTIME_ERR_BASE (-1000)
#define SIM_ERR_BASE (-2000)

/* X(name, value, meaning) for every status. */
#define SIMPLER_STATUS_LIST(X)                                                                   \
  X(SIMPLER_OK, 0, "success")                                                                    \
  X(SIMPLER_NOT_READY, 1, "work is still pending (a poll, not an error)")                        \
  /* Chip band: errors latched during a run, reported negated. */                                \
  X(SIMPLER_CHIP_ERR_ORCH_FATAL, -1, "the orchestration called fatal()")                         \
  X(SIMPLER_CHIP_ERR_INVALID_ARGS, -2, "a task or entry argument was malformed")                 \
  X(SIMPLER_CHIP_ERR_RING_DEADLOCK, -3, "a scope holds more than a ring can ever hold")          \
  X(SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW, -4, "more live tensor-map entries than its capacity")   \
  X(SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT, -5, "the no-progress watchdog fired")                    \
  X(SIMPLER_CHIP_ERR_KERNEL_FAULT, -6, "a kernel reported or caused a detectable fault")         \
  X(SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED, -7, "the orchestration image could not be loaded")        \
  X(SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND, -8, "a task named a func id that the callable lacks")     \
  X(SIMPLER_CHIP_ERR_DEVICE_FAULT, -9, "a driver operation failed during the run")               \
  X(SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE, -10,                                                   \
    "a cluster (MIX) task asks more clusters than the chip has")                                 \
  /* Host band. */                                                                               \
  X(PTO_RUNTIME_ERR_INTERNAL, -1000, "out of host memory, or an internal invariant broke")       \
  X(PTO_RUNTIME_ERR_UNSUPPORTED, -1001, "the build or version does not support the operation")   \
  X(PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE, -1002,                                                \
    "a run config asks for other ring sizes while prepared runs use the engine")                 \
  X(PTO_RUNTIME_ERR_INVALID_STATE, -1003, "the call is not allowed in the current state")        \
  X(PTO_RUNTIME_ERR_INVALID_ARGUMENT, -1004, "an argument is null, malformed or out of range")   \
  X(PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED, -1005, "the kernel-mode code arena has no id left") \
  X(PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED, -1006, "the kernel-mode code arena is full")        \
  X(PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT, -1007, "a launch named a callable id never minted")   \
  X(PTO_RUNTIME_ERR_CAPACITY_EXCEEDED, -1008, "the host-built graph does not fit")               \
  X(PTO_RUNTIME_ERR_TIMEOUT, -1009, "a bounded wait expired")                                    \
  /* Simulated driver band. */                                                                   \
  X(SIM_ERR_INVALID_VALUE, -2001, "null/zero/out-of-range argument")                             \
  X(SIM_ERR_INVALID_DEVICE, -2002, "device id out of range")                                     \
  X(SIM_ERR_NO_DEVICE, -2003, "no current device on this thread")                                \
  X(SIM_ERR_OUT_OF_MEMORY, -2004, "device arena exhausted")                                      \
  X(SIM_ERR_INVALID_POINTER, -2005, "foreign, interior or freed device pointer")                 \
  X(SIM_ERR_OUT_OF_RANGE, -2006, "copy/set runs past an allocation")                             \
  X(SIM_ERR_INVALID_HANDLE, -2007, "unknown or destroyed stream/event")                          \
  X(SIM_ERR_WRONG_DEVICE, -2008, "handle belongs to another device")                             \
  X(SIM_ERR_INJECTED_FAULT, -2009, "default status of an injected fault")                        \
  X(SIM_ERR_ALREADY_INITIALIZED, -2010, "configure after a device was used")                     \
  X(SIM_ERR_UNKNOWN_OPERATION, -2011, "fault-injection/counter name not known")                  \
  X(SIM_ERR_BUSY, -2012, "resource still has pending work")

/* The constants: plain ints in C++ (so `cond ? status : OTHER` and deduced return types
 * stay int), enumerators in C. */
#ifdef __cplusplus
}
#define SIMPLER_STATUS_CONSTANT_(name, value, meaning) inline constexpr int name = (value);
SIMPLER_STATUS_LIST(SIMPLER_STATUS_CONSTANT_)
#undef SIMPLER_STATUS_CONSTANT_
extern "C" {
#else
enum {
#define SIMPLER_STATUS_ENUMERATOR_(name, value, meaning) name = (value),
  SIMPLER_STATUS_LIST(SIMPLER_STATUS_ENUMERATOR_)
#undef SIMPLER_STATUS_ENUMERATOR_
};
#endif

/* Name of any status, e.g. "PTO_RUNTIME_ERR_INVALID_STATE"; for a value not in the list,
 * the band's "..._UNKNOWN". Never NULL. */
static inline const char* simpler_status_name(int status) {
  switch (status) {
#define SIMPLER_STATUS_NAME_CASE_(name, value, meaning) \
  case (value):                                         \
    return #name;
    SIMPLER_STATUS_LIST(SIMPLER_STATUS_NAME_CASE_)
#undef SIMPLER_STATUS_NAME_CASE_
    default:
      break;
  }
  if (status < 0 && status > PTO_RUNTIME_ERR_BASE) return "SIMPLER_CHIP_ERR_UNKNOWN";
  if (status <= PTO_RUNTIME_ERR_BASE && status > PTO_RUNTIME_ERR_BASE - 100)
    return "PTO_RUNTIME_ERR_UNKNOWN";
  if (status <= SIM_ERR_BASE && status > SIM_ERR_BASE - 100) return "SIM_ERR_UNKNOWN";
  return "SIMPLER_STATUS_UNKNOWN";
}

/* One sentence on what a status means ("" for a value not in the list). Never NULL. */
static inline const char* simpler_status_meaning(int status) {
  switch (status) {
#define SIMPLER_STATUS_MEANING_CASE_(name, value, meaning) \
  case (value):                                            \
    return meaning;
    SIMPLER_STATUS_LIST(SIMPLER_STATUS_MEANING_CASE_)
#undef SIMPLER_STATUS_MEANING_CASE_
    default:
      return "";
  }
}

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_ABI_STATUS_H */
