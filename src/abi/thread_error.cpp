#include "abi/thread_error.h"

#include <algorithm>
#include <cstring>

namespace simpler::rt::host {
namespace {

struct ThreadError {
  int status;
  char message[kThreadErrorCapacity];
};
thread_local ThreadError t_error{};
thread_local char t_text[kThreadErrorCapacity];

size_t append(char* buffer, size_t at, std::string_view text) {
  const size_t n = std::min(text.size(), kThreadErrorCapacity - 1 - at);
  std::memcpy(buffer + at, text.data(), n);
  return at + n;
}

}  // namespace

void clear_thread_error() noexcept {
  t_error.status = 0;
  t_error.message[0] = '\0';
}

void set_thread_error(int status, std::string_view entry, std::string_view message) noexcept {
  size_t at = append(t_error.message, 0, entry);
  at = append(t_error.message, at, ": ");
  at = append(t_error.message, at, message);
  t_error.message[at] = '\0';
  t_error.status = status;
}

int thread_error_status() noexcept { return t_error.status; }

const char* thread_error_message() noexcept { return t_error.message; }

const char* copy_to_thread_buffer(std::string_view text) noexcept {
  const size_t n = append(t_text, 0, text);
  t_text[n] = '\0';
  return t_text;
}

}  // namespace simpler::rt::host
