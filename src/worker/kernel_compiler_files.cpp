#include "kernel_compiler_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

#include "support/posix_io.h"

namespace simpler::kc {
namespace {

std::filesystem::path temp_root() {
  const char* env = std::getenv("TMPDIR");
  return (env != nullptr && env[0] != '\0') ? std::filesystem::path(env)
                                            : std::filesystem::path("/tmp");
}

using support::write_all;

}  // namespace

TempDir::TempDir() {
  std::string pattern = (temp_root() / "simpler-kc-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot create a temp directory from '" + pattern + "'");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;  // nothing useful to do if removal fails in a destructor
  std::filesystem::remove_all(path_, ignored);
}

std::optional<std::vector<uint8_t>> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return data;
}

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

void write_file(const std::filesystem::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "cannot write '" + path.string() + "'");
  }
  const bool ok = write_all(fd, reinterpret_cast<const uint8_t*>(data.data()), data.size());
  const int saved_errno = errno;
  if (::close(fd) != 0 || !ok) {
    throw std::system_error(ok ? errno : saved_errno, std::generic_category(),
                            "cannot write '" + path.string() + "'");
  }
}

bool write_file_atomically(const std::filesystem::path& path, std::span<const uint8_t> data) {
  std::string temp = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fchmod(fd, 0600) == 0 && write_all(fd, data.data(), data.size());
  ok = (::close(fd) == 0) && ok;
  ok = ok && ::rename(temp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

}  // namespace simpler::kc
