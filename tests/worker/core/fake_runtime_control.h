// Test hook of the fake runtime build (fake_runtime.cpp): behaviours to provoke and
// counters to observe. The test dlopens the same library path to reach it.
#pragma once

#include <cstdint>

extern "C" {

struct FakeRuntimeControl {
  // ---- behaviours (reset by fake_runtime_reset) ----
  int supported;                // kernel_mode_supported's answer
  int kernel_init_status;       // status of kernel_mode_init
  int init_device_status;       // status of init_device
  int finalize_failures;        // the next N finalize_device calls fail ...
  int finalize_failure_status;  // ... with this status
  int prepare_status;           // status of kernel prepare
  int prepare_id_mode;          // 0 normal, 1 success without writing an id, 2 success with id -5
  int launch_status;            // status of kernel launch
  int run_status;               // status every program-mode run ends with
  int runs_blocked;             // 1: program-mode runs stay pending until set to 0
  int launches_blocked;         // 1: kernel launches block until set to 0
  // ---- observations ----
  int contexts_created;
  int contexts_destroyed;
  int supported_calls;
  int kernel_init_calls;
  int init_device_calls;
  int finalize_calls;
  int prepare_calls;
  int launch_calls;
  int launches_in_progress;
  int runs_started;
  int runs_finalized;  // finalize_run calls that released a run
  uint64_t last_generation;
  void* last_launch_stream;
};

typedef FakeRuntimeControl* (*fake_runtime_control_fn)(void);
typedef void (*fake_runtime_reset_fn)(void);
typedef void (*fake_runtime_set_fn)(const char* field, int value);  // wakes blocked calls
typedef int (*fake_runtime_wait_launch_fn)(int timeout_ms);
}
