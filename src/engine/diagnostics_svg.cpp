// deps.dot -> deps.svg through Graphviz, when it is installed. Best effort: the DOT file
// is the contract; a missing, failing or slow `dot` only means no SVG.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "diagnostics.h"

extern char** environ;

namespace simpler::rt {
namespace {

// A run's diagnostics must not stall the caller for long on a huge graph.
constexpr auto kRenderTimeout = std::chrono::seconds(20);

}  // namespace

bool render_svg(const std::string& dot_path, const std::string& svg_path) {
  // $SIMPLER_DOT names the Graphviz program ("" or "none" turns the SVG off); else `dot`.
  const char* configured = std::getenv("SIMPLER_DOT");
  const std::string program = configured != nullptr ? configured : "dot";
  if (program.empty() || program == "none") return false;

  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return false;
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string a0 = program, a1 = "-Tsvg", a2 = "-o", a3 = svg_path, a4 = dot_path;
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;  // not installed

  const auto deadline = std::chrono::steady_clock::now() + kRenderTimeout;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return false;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::remove(svg_path.c_str());  // never leave a half-written picture
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) std::remove(svg_path.c_str());
  return ok;
}

}  // namespace simpler::rt
