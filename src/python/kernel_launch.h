// simpler.KernelLaunch: a kernel-mode launch validated and packed once
// (Worker.kernel_bind), re-launched cheaply on a caller's stream.
//
// launch() builds no Python object and releases the GIL around the native enqueue; it goes
// through simpler::Worker::kernel_launch, so every kernel-mode rule (mode, READY/CLOSED,
// fork fence, the worker's lock, ids minted by this Worker, nonzero stream) holds as for
// Worker.kernel_launch. set_arg(i, value) re-packs one argument with the same checks.
// One descriptor is driven by one thread at a time: set_arg during a launch on another
// thread is refused.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "call_args.h"
#include "simpler/worker/worker.h"
#include "task_interface_types.h"

namespace simpler::python {

class KernelLaunch {
 public:
  // `worker_object` is the Python object holding `worker` (kept referenced).
  KernelLaunch(pybind11::object worker_object, Worker& worker, int64_t callable_id,
               std::vector<ArgSpec> signature, PyChipStorageTaskArgs args);

  void launch(pybind11::handle caller_stream);
  void set_arg(uint32_t index, pybind11::handle value);
  int64_t callable_id() const { return callable_id_; }
  size_t arg_count() const { return signature_.size(); }
  const PyChipStorageTaskArgs& args() const { return args_; }

 private:
  pybind11::object worker_object_;
  Worker& worker_;
  int64_t callable_id_;
  std::vector<ArgSpec> signature_;
  PackTarget target_;
  PyChipStorageTaskArgs args_;
  std::atomic<bool> launching_{false};
};

// Worker.kernel_launch / kernel_bind's argument handling: `values` is the tuple of the
// positional arguments after callable_id; one ChipStorageTaskArgs, or one list/tuple, is
// taken as the whole set.
pybind11::handle unwrap_arguments(pybind11::handle values);

void bind_kernel_launch(pybind11::module_& m);

}  // namespace simpler::python
