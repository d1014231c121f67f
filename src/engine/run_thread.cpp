// The orchestrator thread of watched runs.
#include "run_thread.h"

#include <pthread.h>

namespace simpler::rt {

RunThread::~RunThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (!thread_.joinable()) return;
  if (abandoned()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void RunThread::start(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { loop(); });
    pthread_setname_np(thread_.native_handle(), "simpler-orch");
  }
  job_ = std::move(job);
  has_job_ = true;
  done_ = false;
  cv_.notify_all();
}

bool RunThread::wait_for(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return done_; });
}

void RunThread::abandon() {
  std::lock_guard<std::mutex> lock(mutex_);
  abandoned_ = true;
}

bool RunThread::abandoned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return abandoned_;
}

void RunThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return has_job_ || stop_; });
    if (!has_job_) return;
    std::function<void()> job = std::move(job_);
    has_job_ = false;
    lock.unlock();
    job();
    lock.lock();
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace simpler::rt
