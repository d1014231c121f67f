// Running the compiler as a child process (internal).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace simpler::kc {

struct ProcessResult {
  bool started = false;    // false: the program could not be run (see `output`)
  bool timed_out = false;  // the timeout expired: the whole process group was killed
  int exit_code = -1;      // exit status, or 128 + signal number when killed by a signal
  std::string output;      // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH when it has no '/') in a process group of its own, with
// stdin from /dev/null and stdout+stderr captured through `log_file`, and waits for it
// at most `timeout_seconds` (> 0): then SIGKILL goes to the whole group (the compiler
// driver and the cc1plus / as / ld it started) and the child is reaped.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& log_file, double timeout_seconds);

}  // namespace simpler::kc
