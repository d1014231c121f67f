// simpler runtime host — the calling thread's last error (C ABI v2).
//
// Every table entry clears it first; a failing entry records (status, "entry: message").
// Per thread, so a call's message is never overwritten by a call on another thread, and
// per call, so a stale message is never reported after a success. Fixed buffers keep it
// trivially destructible: no thread-exit destructor pins the build's shared library.
#pragma once

#include <string_view>

namespace simpler::rt::host {

constexpr size_t kThreadErrorCapacity = 2048;  // bytes of message kept, NUL included

void clear_thread_error() noexcept;
// Keeps at most kThreadErrorCapacity - 1 bytes of "entry: message".
void set_thread_error(int status, std::string_view entry, std::string_view message) noexcept;
int thread_error_status() noexcept;
const char* thread_error_message() noexcept;  // "" when none

// A per-thread buffer for text an entry hands out (valid until the thread's next call).
const char* copy_to_thread_buffer(std::string_view text) noexcept;

}  // namespace simpler::rt::host
