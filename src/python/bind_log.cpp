// simpler._native.log: the bridge from the process's log sink (simpler/log/log.h) to
// Python's logging. Native threads never take the GIL: the sink only appends to a bounded
// queue; python/simpler/_log.py drains it on a daemon thread (waiting here without the
// GIL) and hands the records to logging.getLogger("simpler").
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "simpler/log/log.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

using Record = std::tuple<int, std::string, std::string>;

// A burst beyond this is counted, not stored: logging must never grow without bound.
constexpr size_t kMaxQueued = 10000;

class LogQueue {
 public:
  void push(int level, const char* component, const char* message) {
    {
      std::lock_guard lock(mutex_);
      if (records_.size() >= kMaxQueued) {
        ++dropped_;
        return;
      }
      records_.emplace_back(level, component, message);
    }
    ready_.notify_one();
  }

  // Waits up to `timeout` seconds for records (0: no wait); returns them and the number
  // dropped since the last call.
  std::pair<std::vector<Record>, uint64_t> take(double timeout) {
    std::unique_lock lock(mutex_);
    if (timeout > 0) {
      ready_.wait_for(lock, std::chrono::duration<double>(timeout),
                      [&] { return !records_.empty() || dropped_ != 0 || woken_; });
    }
    woken_ = false;
    std::vector<Record> out(std::make_move_iterator(records_.begin()),
                            std::make_move_iterator(records_.end()));
    records_.clear();
    const uint64_t dropped = dropped_;
    dropped_ = 0;
    return {std::move(out), dropped};
  }

  void wake() {
    {
      std::lock_guard lock(mutex_);
      woken_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Record> records_;
  uint64_t dropped_ = 0;
  bool woken_ = false;
};

// Lives for the whole process (native threads may log during interpreter teardown).
LogQueue& queue() {
  static auto* q = new LogQueue();
  return *q;
}

// Set in a forked child: no drain thread until the first line, which asks the main
// thread to start one (a native thread cannot start a Python thread). Starting it in the
// after-fork hook hung the child under ASan (GCC's allocator is not fork-safe: a lock held
// at the fork stops the child's first new thread).
std::atomic<bool> g_start_drain_on_line{false};

int start_drain(void* /*unused*/) {
  PyObject* module = PyImport_ImportModule("simpler._log");
  PyObject* result =
      module != nullptr ? PyObject_CallMethod(module, "_start_on_line", nullptr) : nullptr;
  Py_XDECREF(result);
  Py_XDECREF(module);
  if (result == nullptr) PyErr_Clear();  // the lines stay queued: flush() delivers them
  return 0;
}

void enqueue(void* user, int level, const char* component, const char* message) {
  static_cast<LogQueue*>(user)->push(level, component, message);
  if (g_start_drain_on_line.load(std::memory_order_relaxed) &&
      g_start_drain_on_line.exchange(false) && Py_AddPendingCall(&start_drain, nullptr) != 0) {
    g_start_drain_on_line.store(true);  // the pending-call queue was full: the next line
  }
}

}  // namespace

void bind_log(py::module_& root) {
  py::module_ m = root.def_submodule("log", "Bridge of the native log sink (simpler/_log.py).");
  m.attr("DEBUG") = static_cast<int>(SIMPLER_LOG_LEVEL_DEBUG);
  m.attr("INFO") = static_cast<int>(SIMPLER_LOG_LEVEL_INFO);
  m.attr("WARNING") = static_cast<int>(SIMPLER_LOG_LEVEL_WARNING);
  m.attr("ERROR") = static_cast<int>(SIMPLER_LOG_LEVEL_ERROR);
  m.attr("OFF") = static_cast<int>(SIMPLER_LOG_LEVEL_OFF);
  m.def(
      "install", [] { simpler_log_set_sink(&enqueue, &queue()); },
      "Route native log lines into the queue.");
  m.def(
      "uninstall",
      [] {
        simpler_log_set_sink(nullptr, nullptr);
        queue().wake();
      },
      "Back to the stderr sink; wakes a waiting take().");
  m.def("wake", [] { queue().wake(); });
  m.def(
      "start_drain_on_line", [] { g_start_drain_on_line.store(true); },
      "The next native line schedules simpler._log._start_on_line() on the main thread.");
  m.def(
      "take",
      [](double timeout) {
        std::pair<std::vector<Record>, uint64_t> got;
        {
          py::gil_scoped_release release;
          got = queue().take(timeout);
        }
        return got;
      },
      py::arg("timeout") = 0.0,
      "(records, dropped): the queued (level, component, message) records, waiting up to "
      "`timeout` seconds for the first.");
  m.def("threshold", [] { return simpler_log_threshold(); });
  m.def("set_threshold", [](int level) { simpler_log_set_threshold(level); });
  m.def("threshold_from_env", [] { return simpler_log_threshold_from_env() != 0; });
  m.def("enabled", [](int level) { return simpler_log_enabled(level) != 0; });
  m.def(
      "emit",
      [](int level, const std::string& component, const std::string& message) {
        simpler_log(level, component.c_str(), "%s", message.c_str());
      },
      "Log one line through the native sink (as native code would).");
}

}  // namespace simpler::python
