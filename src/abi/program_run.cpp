#include "abi/program_run.h"

#include <chrono>

namespace simpler::rt::host {

bool ProgramRun::wait_done(int64_t timeout_us) {
  std::unique_lock<std::mutex> lock(mutex);
  // Anything beyond ~11 days is "forever" (and keeps the deadline arithmetic in range).
  constexpr int64_t kForeverUs = int64_t{1} << 40;
  if (timeout_us < 0 || timeout_us >= kForeverUs) {
    finished.wait(lock, [&] { return done; });
    return true;
  }
  return finished.wait_for(lock, std::chrono::microseconds(timeout_us), [&] { return done; });
}

bool ProgramRun::settle() {
  if (done || !completed || !job_finished) return false;
  done = true;
  return true;
}

}  // namespace simpler::rt::host
