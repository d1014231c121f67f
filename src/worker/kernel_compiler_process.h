// Running the compiler as a child process (internal).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace simpler::kc {

struct ProcessResult {
  bool started = false;  // false: the program could not be run (see `output`)
  int exit_code = -1;    // exit status, or 128 + signal number when killed by a signal
  std::string output;    // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH when it has no '/') with stdin from /dev/null and
// stdout+stderr captured through `log_file`, and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& log_file);

}  // namespace simpler::kc
