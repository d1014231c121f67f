// posix_spawn rather than fork: safe in a multi-threaded process (Python, runtime threads).
#include "kernel_compiler_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "kernel_compiler_files.h"

extern char** environ;

namespace simpler::kc {
namespace {

// RAII for posix_spawn_file_actions_t.
class FileActions {
 public:
  FileActions() { ok_ = ::posix_spawn_file_actions_init(&actions_) == 0; }
  ~FileActions() {
    if (ok_) ::posix_spawn_file_actions_destroy(&actions_);
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  bool ok() const { return ok_; }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  bool ok_ = false;
};

}  // namespace

// RAII for posix_spawnattr_t: the child leads a new process group, so a timeout can kill
// everything the compiler driver started.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    ok_ = ::posix_spawnattr_init(&attr_) == 0 &&
          ::posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP) == 0 &&
          ::posix_spawnattr_setpgroup(&attr_, 0) == 0;
  }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  bool ok() const { return ok_; }
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
  bool ok_ = false;
};

// waitpid with a deadline: polls with a short, growing sleep (a compile takes 100s of ms,
// so a few ms of latency is nothing). Returns the waitpid result (pid, or -1 with errno),
// or 0 when the deadline passed first.
pid_t wait_until(pid_t pid, int* status, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t waited = ::waitpid(pid, status, WNOHANG);
    if (waited == pid || (waited < 0 && errno != EINTR)) return waited;
    if (std::chrono::steady_clock::now() >= deadline) return 0;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& log_file, double timeout_seconds) {
  ProcessResult result;
  FileActions actions;
  if (!actions.ok() ||
      ::posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0) !=
          0 ||
      ::posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, log_file.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0600) != 0 ||
      ::posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO) != 0) {
    result.output = "cannot set up the child process's file actions";
    return result;
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  SpawnAttributes attributes;
  if (!attributes.ok()) {
    result.output = "cannot set up the child process's attributes";
    return result;
  }
  pid_t pid = -1;
  const int spawn_error =
      ::posix_spawnp(&pid, args[0], actions.get(), attributes.get(), args.data(), environ);
  if (spawn_error != 0) {
    result.output = "cannot run '" + argv[0] + "': " + std::strerror(spawn_error);
    return result;
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds));
  pid_t waited = wait_until(pid, &status, deadline);
  if (waited == 0) {
    ::kill(-pid, SIGKILL);  // the group: the driver and every tool it started
    result.timed_out = true;
    do {
      waited = ::waitpid(pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
  }
  if (waited < 0) {
    result.output = "cannot wait for '" + argv[0] + "': " + std::strerror(errno);
    return result;
  }
  result.started = true;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.output = read_text_file(log_file).value_or("");
  return result;
}

}  // namespace simpler::kc
