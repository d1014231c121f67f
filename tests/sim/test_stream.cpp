// Streams: order, pending/idle, sticky errors, destroy semantics, concurrency, executors.
#include <dirent.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim_test_support.h"

namespace simpler::sim::test {
namespace {

using StreamTest = SimTest;

struct OrderLog {
  std::mutex mutex;
  std::vector<int> seen;
};
struct OrderEntry {
  OrderLog* log;
  int value;
};
void append_to_log(void* p) {
  auto* entry = static_cast<OrderEntry*>(p);
  std::lock_guard lock(entry->log->mutex);
  entry->log->seen.push_back(entry->value);
}
void increment(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

struct JobRecord {
  std::atomic<int> runs{0};
  std::atomic<int> cleanups{0};
  int result = SIMPLER_OK;
};
int record_job(void* p) {
  auto* r = static_cast<JobRecord*>(p);
  r->runs.fetch_add(1);
  return r->result;
}
void record_cleanup(void* p) { static_cast<JobRecord*>(p)->cleanups.fetch_add(1); }

TEST_F(StreamTest, OperationsRunInEnqueueOrder) {
  ScopedStream stream;
  ASSERT_SIM_OK(stream.create_status());
  OrderLog log;
  std::vector<OrderEntry> entries(2000);
  for (int i = 0; i < 2000; ++i) {
    entries[static_cast<size_t>(i)] = {&log, i};
    ASSERT_SIM_OK(
        sim_launch_host_func(stream.get(), append_to_log, &entries[static_cast<size_t>(i)]));
  }
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  ASSERT_EQ(log.seen.size(), 2000u);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(log.seen[static_cast<size_t>(i)], i);
}

TEST_F(StreamTest, AsyncCopiesAndSetsComposeInOrder) {
  ScopedStream stream;
  ScopedDeviceBuffer a(4096), b(4096);
  ASSERT_SIM_OK(a.status());
  ASSERT_SIM_OK(b.status());
  std::vector<unsigned char> host(4096), back(4096, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 3);
  ASSERT_SIM_OK(
      sim_memcpy_async(a.get(), host.data(), 4096, SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  ASSERT_SIM_OK(sim_memset_async(a.bytes() + 100, 0x5A, 50, stream.get()));
  ASSERT_SIM_OK(
      sim_memcpy_async(b.get(), a.get(), 4096, SIM_MEMCPY_DEVICE_TO_DEVICE, stream.get()));
  ASSERT_SIM_OK(
      sim_memcpy_async(back.data(), b.get(), 4096, SIM_MEMCPY_DEVICE_TO_HOST, stream.get()));
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  for (size_t i = 0; i < 4096; ++i) {
    const unsigned char expected = (i >= 100 && i < 150) ? 0x5A : static_cast<unsigned char>(i * 3);
    ASSERT_EQ(back[i], expected) << "byte " << i;
  }
}

TEST_F(StreamTest, EnqueueValidatesArgumentsAndReturnsTheStatus) {
  ScopedStream stream;
  ScopedDeviceBuffer a(1024);
  std::vector<unsigned char> host(2048);
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE, sim_memcpy_async(a.get(), host.data(), 2048,
                                                       SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_memcpy_async(host.data(), a.get(), 16,
                                                          SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE, sim_memset_async(a.get(), 0, 1025, stream.get()));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_memset_async(nullptr, 0, 4, stream.get()));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_launch_host_func(stream.get(), nullptr, nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE,
                sim_launch_device_job(stream.get(), nullptr, nullptr, nullptr));
  // A refused enqueue does not poison the stream.
  EXPECT_SIM_OK(sim_stream_synchronize(stream.get()));
  int32_t device = -1;
  ASSERT_SIM_OK(sim_stream_device(stream.get(), &device));
  EXPECT_EQ(device, 0);
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_stream_device(stream.get(), nullptr));
}

TEST_F(StreamTest, QueryReportsPendingWorkThenIdle) {
  ScopedStream stream;
  ASSERT_SIM_OK(sim_stream_query(stream.get()));  // fresh stream is idle
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  EXPECT_STATUS(SIMPLER_NOT_READY, sim_stream_query(stream.get()));
  gate.open();
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  EXPECT_SIM_OK(sim_stream_query(stream.get()));
}

TEST_F(StreamTest, FailingJobMakesTheStreamStickyAndSkipsLaterWork) {
  ScopedStream stream;
  ScopedDeviceBuffer buffer(1024);
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  JobRecord failing;
  failing.result = SIMPLER_CHIP_ERR_KERNEL_FAULT;
  JobRecord later;
  std::atomic<int> host_runs{0};
  std::vector<unsigned char> host(1024, 0x11);
  ASSERT_SIM_OK(sim_memset_async(buffer.get(), 0x22, 1024, stream.get()));
  ASSERT_SIM_OK(sim_launch_device_job(stream.get(), record_job, &failing, record_cleanup));
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), increment, &host_runs));
  ASSERT_SIM_OK(
      sim_memcpy_async(buffer.get(), host.data(), 1024, SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  ASSERT_SIM_OK(sim_memset_async(buffer.get(), 0x33, 1024, stream.get()));
  ASSERT_SIM_OK(sim_launch_device_job(stream.get(), record_job, &later, record_cleanup));
  gate.open();
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(stream.get()));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_query(stream.get()));
  EXPECT_EQ(failing.runs.load(), 1);
  EXPECT_EQ(failing.cleanups.load(), 1);
  EXPECT_EQ(later.runs.load(), 0);      // skipped
  EXPECT_EQ(later.cleanups.load(), 1);  // but cleaned up exactly once
  EXPECT_EQ(host_runs.load(), 0);
  std::vector<unsigned char> back(1024);
  ASSERT_SIM_OK(sim_memcpy(back.data(), buffer.get(), 1024, SIM_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(back[0], 0x22);  // the skipped copy and set never happened
  // The error stays for the life of the stream; new work is accepted but skipped.
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), increment, &host_runs));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(stream.get()));
  EXPECT_EQ(host_runs.load(), 0);
  EXPECT_EQ(later.cleanups.load(), 1);
}

// sim_free is ordered after the work already queued (the CUDA stream-ordered allocator's
// rule): a copy queued before the free still runs into the memory, the pointer is invalid
// for new work at once, and the memory is reused only after the stream passed the free.
TEST_F(StreamTest, FreeIsOrderedAfterTheWorkQueuedBeforeIt) {
  ScopedStream stream;
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 4096));
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_before, &total));
  Gate gate;
  std::vector<unsigned char> host(4096, 1);
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_memcpy_async(ptr, host.data(), 4096, SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  ASSERT_SIM_OK(sim_free(ptr));
  // Gone for new work (and a second free is a double free) ...
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(ptr));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_memset(ptr, 0, 16));
  int32_t device = -1;
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(ptr, 16, &device));
  SimAllocation a{};
  ASSERT_SIM_OK(sim_pointer_allocation(ptr, &a));
  EXPECT_EQ(a.flags, SIM_ALLOCATION_FREE_PENDING);
  EXPECT_EQ(a.size, 4096u);
  // ... but not reused while the queued copy may still write it.
  void* other = nullptr;
  ASSERT_SIM_OK(sim_malloc(&other, 4096));
  EXPECT_NE(other, ptr);
  size_t free_now = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_now, &total));
  EXPECT_EQ(free_now, free_before - 4096);  // the pending block is still held
  gate.open();
  EXPECT_SIM_OK(sim_stream_synchronize(stream.get()));  // the copy ran: no sticky error
  ASSERT_SIM_OK(sim_mem_get_info(&free_now, &total));
  EXPECT_EQ(free_now, free_before);  // released once the stream passed the free
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_allocation(ptr, &a));
  ASSERT_SIM_OK(sim_free(other));
}

// With no work queued anywhere, a free is immediate and the block is reused at once.
TEST_F(StreamTest, FreeWithNothingQueuedIsImmediate) {
  ScopedStream stream;
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 4096));
  ASSERT_SIM_OK(sim_free(ptr));
  void* again = nullptr;
  ASSERT_SIM_OK(sim_malloc(&again, 4096));
  EXPECT_EQ(again, ptr);
  ASSERT_SIM_OK(sim_free(again));
}

// A reset forgets the pending frees of its device along with all its memory.
TEST_F(StreamTest, ResetDropsPendingFreesAndBumpsTheEpoch) {
  ASSERT_SIM_OK(sim_set_device(2));
  uint64_t epoch = 0;
  ASSERT_SIM_OK(sim_device_reset_epoch(2, &epoch));
  sim_stream_t s = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&s));
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 4096));
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(s, Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_free(ptr));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open();
  });
  ASSERT_SIM_OK(sim_device_reset(2));
  opener.join();
  uint64_t after = 0;
  ASSERT_SIM_OK(sim_device_reset_epoch(2, &after));
  EXPECT_EQ(after, epoch + 1);
  SimAllocation a{};
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_allocation(ptr, &a));
  size_t free_now = 0;
  size_t total = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_now, &total));
  EXPECT_EQ(free_now, total);
  ASSERT_SIM_OK(sim_set_device(0));
}

TEST_F(StreamTest, JobCleanupRunsExactlyOnceForEveryLaunch) {
  ScopedStream stream;
  std::vector<JobRecord> jobs(50);
  jobs[20].result = SIMPLER_CHIP_ERR_ORCH_FATAL;
  for (auto& job : jobs)
    ASSERT_SIM_OK(sim_launch_device_job(stream.get(), record_job, &job, record_cleanup));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_ORCH_FATAL, sim_stream_synchronize(stream.get()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].runs.load(), i <= 20 ? 1 : 0) << "job " << i;
    EXPECT_EQ(jobs[i].cleanups.load(), 1) << "job " << i;
  }
  // A NULL cleanup is allowed.
  JobRecord no_cleanup;
  ScopedStream fresh;
  ASSERT_SIM_OK(sim_launch_device_job(fresh.get(), record_job, &no_cleanup, nullptr));
  ASSERT_SIM_OK(sim_stream_synchronize(fresh.get()));
  EXPECT_EQ(no_cleanup.runs.load(), 1);
}

// The executor takes queued ops out in batches (up to 64): an error in one batch must
// still skip the rest of that batch and every later batch, clean each job up exactly
// once, and signal an event recorded at the very end.
TEST_F(StreamTest, StickyErrorSkipsWorkAcrossExecutorBatches) {
  ScopedStream stream;
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  std::vector<JobRecord> jobs(300);
  jobs[100].result = SIMPLER_CHIP_ERR_KERNEL_FAULT;
  for (auto& job : jobs)
    ASSERT_SIM_OK(sim_launch_device_job(stream.get(), record_job, &job, record_cleanup));
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  ASSERT_SIM_OK(sim_event_record(event, stream.get()));
  EXPECT_STATUS(SIMPLER_NOT_READY, sim_event_query(event));
  gate.open();
  EXPECT_SIM_OK(sim_event_synchronize(event));  // signalled although skipped
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(stream.get()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].runs.load(), i <= 100 ? 1 : 0) << "job " << i;
    EXPECT_EQ(jobs[i].cleanups.load(), 1) << "job " << i;
  }
  EXPECT_SIM_OK(sim_event_destroy(event));
}

void sleep_then_flag(void* flag) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  static_cast<std::atomic<bool>*>(flag)->store(true);
}

TEST_F(StreamTest, DestroyWaitsForPendingWorkThenInvalidatesTheHandle) {
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  std::atomic<bool> finished{false};
  std::atomic<int> after{0};
  ASSERT_SIM_OK(sim_launch_host_func(stream, sleep_then_flag, &finished));
  for (int i = 0; i < 100; ++i) ASSERT_SIM_OK(sim_launch_host_func(stream, increment, &after));
  ASSERT_SIM_OK(sim_stream_destroy(stream));
  EXPECT_TRUE(finished.load());
  EXPECT_EQ(after.load(), 100);
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_synchronize(stream));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_query(stream));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_launch_host_func(stream, increment, &after));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_destroy(stream));
  int32_t device = -1;
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_device(stream, &device));
}

TEST_F(StreamTest, NullAndForgedHandlesAreRefused) {
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_stream_create(nullptr));
  sim_stream_t forged = reinterpret_cast<sim_stream_t>(uintptr_t{0xdead0});
  for (sim_stream_t bad : {static_cast<sim_stream_t>(nullptr), forged}) {
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_synchronize(bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_query(bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_destroy(bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_launch_host_func(bad, increment, nullptr));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_launch_device_job(bad, record_job, nullptr, nullptr));
  }
  // An event handle is not a stream handle.
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_query(reinterpret_cast<sim_stream_t>(event)));
  ASSERT_SIM_OK(sim_event_destroy(event));
}

// Rendezvous: each side waits for the other; only concurrent execution finishes both.
struct Rendezvous {
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
};
void meet(void* p) {
  auto* r = static_cast<Rendezvous*>(p);
  r->arrived.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + kGenerousTimeout;
  while (r->arrived.load() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (r->arrived.load() >= 2) r->met.fetch_add(1);
}

TEST_F(StreamTest, TwoStreamsOnOneDeviceRunConcurrently) {
  ScopedStream a, b;
  Rendezvous r;
  ASSERT_SIM_OK(sim_launch_host_func(a.get(), meet, &r));
  ASSERT_SIM_OK(sim_launch_host_func(b.get(), meet, &r));
  ASSERT_SIM_OK(sim_stream_synchronize(a.get()));
  ASSERT_SIM_OK(sim_stream_synchronize(b.get()));
  EXPECT_EQ(r.met.load(), 2);
}

TEST_F(StreamTest, StreamsOnTwoDevicesRunConcurrently) {
  ScopedStream a;
  ASSERT_SIM_OK(sim_set_device(1));
  ScopedStream b;
  Rendezvous r;
  ASSERT_SIM_OK(sim_launch_host_func(a.get(), meet, &r));
  ASSERT_SIM_OK(sim_launch_host_func(b.get(), meet, &r));
  ASSERT_SIM_OK(sim_stream_synchronize(a.get()));
  ASSERT_SIM_OK(sim_stream_synchronize(b.get()));
  EXPECT_EQ(r.met.load(), 2);
}

struct SelfCalls {
  sim_stream_t stream = nullptr;
  int sync_status = 0;
  int destroy_status = 0;
  int reset_status = 0;
};
void call_own_stream(void* p) {
  auto* calls = static_cast<SelfCalls*>(p);
  calls->sync_status = sim_stream_synchronize(calls->stream);
  calls->destroy_status = sim_stream_destroy(calls->stream);
  int32_t device = -1;
  sim_stream_device(calls->stream, &device);
  calls->reset_status = sim_device_reset(device);
}

TEST_F(StreamTest, HostFunctionCannotWaitForItsOwnStream) {
  ScopedStream stream;
  SelfCalls calls;
  calls.stream = stream.get();
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), call_own_stream, &calls));
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  EXPECT_STATUS(SIM_ERR_BUSY, calls.sync_status);
  EXPECT_STATUS(SIM_ERR_BUSY, calls.destroy_status);
  EXPECT_STATUS(SIM_ERR_BUSY, calls.reset_status);
  EXPECT_SIM_OK(sim_stream_query(stream.get()));  // still alive and healthy
}

TEST_F(StreamTest, ManyQueuedOperationsGrowTheQueue) {
  ScopedStream stream;
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  OrderLog log;
  std::vector<OrderEntry> entries(10000);
  for (int i = 0; i < 10000; ++i) {
    entries[static_cast<size_t>(i)] = {&log, i};
    ASSERT_SIM_OK(
        sim_launch_host_func(stream.get(), append_to_log, &entries[static_cast<size_t>(i)]));
  }
  gate.open();
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  ASSERT_EQ(log.seen.size(), 10000u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(log.seen[static_cast<size_t>(i)], i);
}

TEST_F(StreamTest, ManyProducerThreadsOnOneStream) {
  ScopedStream stream;
  std::atomic<int> counter{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) sim_launch_host_func(stream.get(), increment, &counter);
    });
  }
  for (auto& p : producers) p.join();
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  EXPECT_EQ(counter.load(), 4000);
}

// The segmented queue: producers racing across segment boundaries keep each producer's
// order, and an executor parked between bursts is woken by the next enqueue.
struct ProducerEntry {
  std::vector<std::pair<int, int>>* seen;  // touched only by the executor
  int producer;
  int seq;
};
void record_entry(void* p) {
  auto* e = static_cast<ProducerEntry*>(p);
  e->seen->emplace_back(e->producer, e->seq);
}

TEST_F(StreamTest, ProducersKeepTheirOrderAcrossSegmentsAndWakeAParkedExecutor) {
  ScopedStream stream;
  constexpr int kProducers = 3;
  constexpr int kPerProducer = 1500;  // several 256-op segments each
  std::vector<std::pair<int, int>> seen;
  std::vector<std::vector<ProducerEntry>> entries(kProducers);
  for (int burst = 0; burst < 2; ++burst) {
    seen.clear();
    std::vector<std::thread> producers;
    for (int t = 0; t < kProducers; ++t) {
      entries[static_cast<size_t>(t)].assign(kPerProducer, ProducerEntry{&seen, t, 0});
      producers.emplace_back([&, t] {
        auto& mine = entries[static_cast<size_t>(t)];
        for (int i = 0; i < kPerProducer; ++i) {
          mine[static_cast<size_t>(i)].seq = i;
          EXPECT_SIM_OK(
              sim_launch_host_func(stream.get(), record_entry, &mine[static_cast<size_t>(i)]));
        }
      });
    }
    for (auto& p : producers) p.join();
    ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
    ASSERT_EQ(seen.size(), static_cast<size_t>(kProducers * kPerProducer));
    std::vector<int> next(kProducers, 0);
    for (const auto& [producer, seq] : seen) {
      ASSERT_EQ(seq, next[static_cast<size_t>(producer)]++) << "producer " << producer;
    }
    // Long enough for the executor to spin out and park before the second burst.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST_F(StreamTest, ConcurrentSynchronizersAllSeeTheWorkDone) {
  ScopedStream stream;
  Gate gate;
  std::atomic<int> counter{0};
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), increment, &counter));
  std::vector<std::future<int>> waiters;
  for (int i = 0; i < 3; ++i)
    waiters.push_back(std::async(std::launch::async, [&] {
      const int status = sim_stream_synchronize(stream.get());
      return status == SIMPLER_OK ? counter.load() : -1;
    }));
  gate.open();
  for (auto& w : waiters) EXPECT_EQ(w.get(), 1);
}

// Stream-executor threads ("sim-stream") of this process and their scheduler states, from
// /proc. Filtered by name: sanitizers start helper threads of their own.
std::vector<char> thread_states() {
  std::vector<char> states;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return states;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "sim-stream") continue;
    std::ifstream stat(std::string("/proc/self/task/") + entry->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close_paren = line.rfind(')');
    if (close_paren != std::string::npos && close_paren + 2 < line.size())
      states.push_back(line[close_paren + 2]);
  }
  closedir(dir);
  return states;
}

TEST_F(StreamTest, ExecutorStartsLazilyAndParksWhenIdle) {
  const size_t threads_before = thread_states().size();
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  EXPECT_EQ(thread_states().size(), threads_before);  // no executor until work arrives
  std::atomic<int> counter{0};
  ASSERT_SIM_OK(sim_launch_host_func(stream, increment, &counter));
  ASSERT_SIM_OK(sim_stream_synchronize(stream));
  EXPECT_EQ(thread_states().size(), threads_before + 1);
  // Idle: the executor ends up sleeping (parked), never spinning for good.
  bool all_parked = false;
  const auto deadline = std::chrono::steady_clock::now() + kGenerousTimeout;
  while (!all_parked && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    int running = 0;
    for (char s : thread_states()) running += (s == 'R') ? 1 : 0;
    all_parked = running == 0;
  }
  EXPECT_TRUE(all_parked);
  ASSERT_SIM_OK(sim_stream_destroy(stream));
  EXPECT_EQ(thread_states().size(), threads_before);  // joined on destroy
}

}  // namespace
}  // namespace simpler::sim::test
