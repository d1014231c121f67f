// The process's log sink and threshold (include/simpler/log/log.h).
//
// Process-wide by design: one instance of this library per process is the one place every
// native part logs through. The threshold is an atomic read on every call site; the sink
// is swapped under a shared mutex so that set_sink returns only when no thread still runs
// the old one (the Python bridge relies on this before it goes away).
#include "simpler/log/log.h"

#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace {

constexpr int kUnset = -1;

struct State {
  std::atomic<int> threshold{kUnset};
  std::atomic<bool> from_env{false};
  std::shared_mutex sink_mutex;
  simpler_log_sink_fn sink = nullptr;  // guarded by sink_mutex; null: stderr
  void* user = nullptr;
};

State& state() {
  static State s;  // never destroyed before late loggers (static local, trivial teardown)
  return s;
}

int initial_threshold(bool* from_env) {
  if (const char* env = std::getenv("SIMPLER_LOG_LEVEL"); env != nullptr && env[0] != '\0') {
    const int level = simpler_log_parse_level(env);
    if (level >= 0) {
      *from_env = true;
      return level;
    }
    std::fprintf(stderr,
                 "simpler WARNING log: SIMPLER_LOG_LEVEL=%s is not a level (debug, info, "
                 "warning, error, off or a number); using warning\n",
                 env);
  }
  if (const char* legacy = std::getenv("SIMPLER_LOG");
      legacy != nullptr && strcasecmp(legacy, "debug") == 0) {
    *from_env = true;
    return SIMPLER_LOG_LEVEL_DEBUG;
  }
  return SIMPLER_LOG_LEVEL_WARNING;
}

int threshold() {
  State& s = state();
  int t = s.threshold.load(std::memory_order_relaxed);
  if (t != kUnset) return t;
  bool env = false;
  const int initial = initial_threshold(&env);
  if (s.threshold.compare_exchange_strong(t, initial)) {
    s.from_env.store(env);
    return initial;
  }
  return t;  // another thread (or set_threshold) got there first
}

}  // namespace

extern "C" {

int simpler_log_enabled(int level) { return level >= threshold() ? 1 : 0; }
int simpler_log_threshold(void) { return threshold(); }

void simpler_log_set_threshold(int level) {
  threshold();  // settle from_env first
  state().threshold.store(level < 0 ? 0 : level, std::memory_order_relaxed);
}

int simpler_log_threshold_from_env(void) {
  threshold();
  return state().from_env.load() ? 1 : 0;
}

void simpler_log_set_sink(simpler_log_sink_fn sink, void* user) {
  State& s = state();
  std::unique_lock<std::shared_mutex> lock(s.sink_mutex);
  s.sink = sink;
  s.user = user;
}

void simpler_log_v(int level, const char* component, const char* format, va_list args) {
  if (level < threshold()) return;
  char stack[512];
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(stack, sizeof stack, format, copy);
  va_end(copy);
  std::string heap;
  const char* message = stack;
  if (n < 0) {
    message = "(unformattable log message)";
  } else if (static_cast<size_t>(n) >= sizeof stack) {
    heap.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(heap.data(), heap.size(), format, args);
    heap.resize(static_cast<size_t>(n));
    message = heap.c_str();
  }
  const char* who = component != nullptr ? component : "simpler";
  State& s = state();
  std::shared_lock<std::shared_mutex> lock(s.sink_mutex);
  if (s.sink != nullptr) {
    s.sink(s.user, level, who, message);
  } else {
    std::fprintf(stderr, "simpler %s %s: %s\n", simpler_log_level_name(level), who, message);
  }
}

void simpler_log(int level, const char* component, const char* format, ...) {
  if (level < threshold()) return;
  va_list args;
  va_start(args, format);
  simpler_log_v(level, component, format, args);
  va_end(args);
}

const char* simpler_log_level_name(int level) {
  if (level >= SIMPLER_LOG_LEVEL_OFF) return "OFF";
  if (level >= SIMPLER_LOG_LEVEL_ERROR) return "ERROR";
  if (level >= SIMPLER_LOG_LEVEL_WARNING) return "WARNING";
  if (level >= SIMPLER_LOG_LEVEL_INFO) return "INFO";
  return "DEBUG";
}

int simpler_log_parse_level(const char* text) {
  if (text == nullptr) return -1;
  static constexpr struct {
    const char* name;
    int level;
  } kNames[] = {{"debug", SIMPLER_LOG_LEVEL_DEBUG},     {"info", SIMPLER_LOG_LEVEL_INFO},
                {"warning", SIMPLER_LOG_LEVEL_WARNING}, {"warn", SIMPLER_LOG_LEVEL_WARNING},
                {"error", SIMPLER_LOG_LEVEL_ERROR},     {"off", SIMPLER_LOG_LEVEL_OFF},
                {"none", SIMPLER_LOG_LEVEL_OFF},        {"critical", 50}};
  for (const auto& n : kNames)
    if (strcasecmp(text, n.name) == 0) return n.level;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end != text && *end == '\0' && value >= 0 && value <= 1000) return static_cast<int>(value);
  return -1;
}

}  // extern "C"
