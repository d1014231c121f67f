// simpler runtime — the thread that runs a watched run's orchestration, so the thread
// that waits for the run (and polls its watchdog) never runs user code (internal).
//
// Only runs with a watchdog use it: without one, the caller of Engine::execute is the
// orchestrator itself (no hand-off). Started on first use, parked between runs. When the
// watchdog gives up on a job the thread is abandoned: detached at destruction instead of
// joined, since the job may never return; everything the job touches must outlive it
// (the engine then leaks its state on purpose).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace simpler::rt {

class RunThread {
 public:
  RunThread() = default;
  ~RunThread();
  RunThread(const RunThread&) = delete;
  RunThread& operator=(const RunThread&) = delete;

  // Hands `job` to the thread (starting it if needed). The previous job must have
  // finished. Throws std::system_error if the thread cannot be started.
  void start(std::function<void()> job);
  // Waits up to `timeout` for the current job; true once it finished.
  bool wait_for(std::chrono::nanoseconds timeout);
  // The current job may never return: never join the thread.
  void abandon();
  bool abandoned() const;

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool has_job_ = false;
  bool done_ = true;
  bool stop_ = false;
  bool abandoned_ = false;
  std::thread thread_;
};

}  // namespace simpler::rt
