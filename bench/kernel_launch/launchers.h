// The three ways C++ can launch a prepared chip program in kernel mode, each on its own
// simulated device (one live kernel context per device), each with its own caller-owned
// stream and 4 DEVICE tensors:
//   Worker     simpler::Worker(execution_mode="kernel")::kernel_launch  (the public API)
//   ChipWorker simpler::ChipWorker::kernel_launch                       (one layer down)
//   C ABI      kernel_mode_launch of the TMR build's table, dlopen'ed   (the runtime alone)
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "simpler/abi/chip_types.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::bench {

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual const char* name() const = 0;
  // One kernel_launch of the prepared empty program with the 4 tensor args.
  virtual void launch() = 0;
  sim_stream_t stream() const { return stream_; }
  void synchronize() const;  // the caller's stream, as a framework would

 protected:
  sim_stream_t stream_ = nullptr;
};

enum class LaunchPath { WORKER, CHIP_WORKER, C_ABI };

// Makes `device` current on the calling thread, creates the stream and tensors, inits the
// kernel-mode context there and prepares the empty program read from `image_path`.
// Throws std::runtime_error naming what failed. Destruction synchronizes the stream, then
// closes the context and frees everything (on the constructing thread).
std::unique_ptr<Launcher> make_launcher(LaunchPath path, int32_t device,
                                        const std::string& orchestration_path);

}  // namespace simpler::bench
