// posix_spawn rather than fork: safe in a multi-threaded process (Python, runtime threads).
#include "kernel_compiler_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& log_file) {
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

  pid_t pid = -1;
  const int spawn_error =
      ::posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ);
  if (spawn_error != 0) {
    result.output = "cannot run '" + argv[0] + "': " + std::strerror(spawn_error);
    return result;
  }
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
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
