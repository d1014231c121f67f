// The kernel-mode launch's checked-args cache (src/abi/checked_args.h) is asked before any
// check of the caller's args runs, so it must be safe for any bytes a C ABI caller sends.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <new>

#include "abi/checked_args.h"

namespace simpler::rt::host {
namespace {

// A CheckedArgs whose last byte ends a page followed by an inaccessible page: a compare
// that runs past the object faults instead of reading on.
class GuardedCheckedArgs {
 public:
  GuardedCheckedArgs() {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = 2 * page;
    void* map = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(map, MAP_FAILED);
    base_ = static_cast<uint8_t*>(map);
    EXPECT_EQ(mprotect(base_ + page, page, PROT_NONE), 0);
    static_assert(sizeof(CheckedArgs) % alignof(CheckedArgs) == 0);
    checked_ = new (base_ + page - sizeof(CheckedArgs)) CheckedArgs;  // zero-filled page
  }
  ~GuardedCheckedArgs() {
    checked_->~CheckedArgs();
    munmap(base_, bytes_);
  }
  GuardedCheckedArgs(const GuardedCheckedArgs&) = delete;
  GuardedCheckedArgs& operator=(const GuardedCheckedArgs&) = delete;
  CheckedArgs& operator*() const { return *checked_; }

 private:
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  CheckedArgs* checked_ = nullptr;
};

TEST(CheckedArgs, ACountEqualToTheEmptySentinelMatchesNothingAndReadsNothing) {
  // Nothing remembered yet, device memory at generation 0 (an untouched device): a caller's
  // tensor_count of UINT32_MAX used to pass the count check and memcmp ~320 GiB.
  GuardedCheckedArgs checked;
  auto args = std::make_unique<ChipStorageTaskArgs>();  // zeros, like the cache's bytes
  args->tensor_count = UINT32_MAX;
  EXPECT_FALSE((*checked).matches(*args, 0));
}

TEST(CheckedArgs, ALaunchWithMoreTensorsThanCachedForgetsAndMatchesNothing) {
  GuardedCheckedArgs checked;
  auto args = std::make_unique<ChipStorageTaskArgs>();
  args->tensor_count = 2;
  (*checked).remember(*args, 5);
  EXPECT_TRUE((*checked).matches(*args, 5));
  EXPECT_FALSE((*checked).matches(*args, 6));  // memory changed since
  args->tensor_count = CheckedArgs::kMaxTensors + 1;
  (*checked).remember(*args, 5);  // too many to cache: forgotten
  args->tensor_count = UINT32_MAX;
  EXPECT_FALSE((*checked).matches(*args, 5));
  args->tensor_count = 2;
  EXPECT_FALSE((*checked).matches(*args, 5));
}

}  // namespace
}  // namespace simpler::rt::host
