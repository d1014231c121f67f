// Test helper: reach the fake runtime build's control block by loading the same path.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "fake_runtime_control.h"
#include "simpler/task/task_interface.h"
#include "simpler/worker/runtime_build.h"

namespace simpler::testing {

class FakeBuild {
 public:
  explicit FakeBuild(std::string path) : path_(std::move(path)) {
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);  // keeps it loaded for the test
    if (!handle_) throw std::runtime_error(std::string("cannot load fake runtime: ") + dlerror());
    control_ = reinterpret_cast<fake_runtime_control_fn>(dlsym(handle_, "fake_runtime_control"))();
    reset_ = reinterpret_cast<fake_runtime_reset_fn>(dlsym(handle_, "fake_runtime_reset"));
    set_ = reinterpret_cast<fake_runtime_set_fn>(dlsym(handle_, "fake_runtime_set"));
    wait_launch_ = reinterpret_cast<fake_runtime_wait_launch_fn>(
        dlsym(handle_, "fake_runtime_wait_launch_in_progress"));
    reset_();
  }
  ~FakeBuild() {
    reset_();
    dlclose(handle_);
  }
  FakeBuild(const FakeBuild&) = delete;
  FakeBuild& operator=(const FakeBuild&) = delete;

  FakeRuntimeControl& control() { return *control_; }
  void set(const char* field, int value) { set_(field, value); }
  bool wait_launch_in_progress(int timeout_ms = 10'000) { return wait_launch_(timeout_ms) != 0; }
  RuntimeBins bins(const char* runtime = "tensormap_and_ringbuffer") const {
    RuntimeBins b;
    b.platform = "a2a3sim";
    b.runtime = runtime;
    b.host_lib_path = path_;
    return b;
  }
  int live_contexts() const { return control_->contexts_created - control_->contexts_destroyed; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  FakeRuntimeControl* control_ = nullptr;
  fake_runtime_reset_fn reset_ = nullptr;
  fake_runtime_set_fn set_ = nullptr;
  fake_runtime_wait_launch_fn wait_launch_ = nullptr;
};

// A ChipCallable the fake accepts (it never looks inside).
inline ChipCallable tiny_callable() {
  const ArgDirection sig[] = {ArgDirection::IN};
  const uint8_t binary[] = {1, 2, 3, 4};
  return ChipCallable::build(sig, "entry", binary, {});
}

}  // namespace simpler::testing
