// The SimplerOrchApi table and the orchestration services besides submit: scopes,
// intermediate tensors, explicit dependencies, small value reads/writes, fatal, log.
// (submit itself is inline in its entry here: submit_path.h.)
#include <cstdio>
#include <cstring>
#include <exception>

#include "engine_defaults.h"
#include "orchestrator.h"
#include "simpler/abi/status.h"
#include "simpler/log/log.h"
#include "submit_path.h"
#include "tensor_shape.h"

namespace simpler::rt {
namespace {

Orchestrator& self(void* rt) { return *static_cast<Orchestrator*>(rt); }

// No C++ exception may unwind into the orchestration image: anything thrown (only
// allocation failures are possible) fails the run instead.
template <typename F>
int guarded(void* rt, const char* api, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return self(rt).fail(SIMPLER_CHIP_ERR_ORCH_FATAL,
                         std::string(api) + ": internal error: " + e.what());
  }
}

}  // namespace

SimplerOrchApi make_orch_api(Orchestrator* orchestrator) {
  SimplerOrchApi api{};
  api.version = SIMPLER_ORCH_API_VERSION;
  api.struct_size = sizeof(SimplerOrchApi);
  api.rt = orchestrator;
  api.submit = [](void* rt, const SimplerTaskDesc* desc, SimplerTaskResult* out) {
    return guarded(rt, "submit", [&] { return self(rt).submit(desc, out); });
  };
  api.scope_begin = [](void* rt) {
    return guarded(rt, "scope_begin", [&] { return self(rt).scope_begin(); });
  };
  api.scope_end = [](void* rt) {
    return guarded(rt, "scope_end", [&] { return self(rt).scope_end(); });
  };
  api.alloc_tensor = [](void* rt, uint32_t ndims, const int64_t* shapes, uint32_t dtype,
                        ChipTensor* out) {
    return guarded(rt, "alloc_tensor",
                   [&] { return self(rt).alloc_tensor(ndims, shapes, dtype, out); });
  };
  api.add_dependency = [](void* rt, uint64_t before, uint64_t after) {
    return guarded(rt, "add_dependency", [&] { return self(rt).add_dependency(before, after); });
  };
  api.read_value = [](void* rt, const ChipTensor* t, int64_t index, void* out, size_t size) {
    return guarded(rt, "read_value", [&] { return self(rt).read_value(t, index, out, size); });
  };
  api.write_value = [](void* rt, const ChipTensor* t, int64_t index, const void* in, size_t size) {
    return guarded(rt, "write_value", [&] { return self(rt).write_value(t, index, in, size); });
  };
  api.fatal = [](void* rt, const char* message) {
    return guarded(rt, "fatal", [&] { return self(rt).fatal(message); });
  };
  api.log = [](void* rt, int32_t level, const char* message) {
    try {
      self(rt).log(level, message);
    } catch (const std::exception&) {
      // Logging never fails a run.
    }
  };
  return api;
}

int Orchestrator::scope_begin() {
  if (int code = status()) return code;
  bump_progress();
  if (scopes_.size() >= kMaxScopeDepth) {
    return fail(SIMPLER_CHIP_ERR_INVALID_ARGS,
                "scope_begin: scopes nested deeper than " + std::to_string(kMaxScopeDepth));
  }
  scopes_.push_back(ScopeFrame{next_scope_serial_++, block_head_});
  return SIMPLER_OK;
}

int Orchestrator::scope_end() {
  if (int code = status()) return code;
  bump_progress();
  if (scopes_.empty()) {
    return fail(SIMPLER_CHIP_ERR_INVALID_ARGS,
                "scope_end: no scope is open (scope_end without scope_begin)");
  }
  // Its allocations may be freed once every task submitted so far completed; its tasks
  // are no longer pinned (pinned() compares serials with the open scopes).
  const ScopeFrame frame = scopes_.back();
  scopes_.pop_back();
  scopes_changed();
  for (uint64_t b = std::max(frame.first_block, block_tail_); b < block_head_; ++b) {
    HeapBlock& block = blocks_[b % blocks_.size()];
    if (block.free_after == kOpen) block.free_after = head_;
  }
  return SIMPLER_OK;
}

int Orchestrator::alloc_tensor(uint32_t ndims, const int64_t* shapes, uint32_t dtype,
                               ChipTensor* out) {
  if (int code = status()) return code;
  bump_progress();
  if (shapes == nullptr || out == nullptr) {
    return fail(SIMPLER_CHIP_ERR_INVALID_ARGS, "alloc_tensor: shapes and out must not be null");
  }
  uint64_t bytes = 0;
  std::string why;
  if (!shape_bytes(ndims, shapes, dtype, &bytes, &why)) {
    return fail(SIMPLER_CHIP_ERR_INVALID_ARGS, "alloc_tensor: " + why);
  }
  uint8_t* addr = nullptr;
  if (!heap_alloc(bytes, &addr)) return status();
  *out = contiguous_device_tensor(addr, bytes, ndims, shapes, dtype);
  return SIMPLER_OK;
}

int Orchestrator::add_dependency(uint64_t before_task, uint64_t after_task) {
  if (int code = status()) return code;
  bump_progress();
  auto invalid = [&](const std::string& why) {
    return fail(SIMPLER_CHIP_ERR_INVALID_ARGS, "add_dependency(" + std::to_string(before_task) +
                                                   ", " + std::to_string(after_task) + "): " + why);
  };
  // Task ids are the user's numbering (0, 1, ... in submission order within the run).
  const uint64_t submitted = head_ - run_first_;
  if (after_task >= submitted) {
    return invalid("after_task is not a task of this run (" + std::to_string(submitted) +
                   " submitted so far, numbered from 0)");
  }
  if (before_task >= after_task) {
    return invalid("before_task must be a task of this run submitted before after_task");
  }
  const uint64_t before = before_task + run_first_;
  const uint64_t after = after_task + run_first_;
  // The latest task ran at its submit (immediate_run.cpp) after every earlier task had
  // completed: the dependency holds already. (No graph observer in that mode.)
  if (ran_immediately(after)) return SIMPLER_OK;
  TaskSlot& consumer = chip_.slot(after);
  // One message whatever path ran it (queued, direct, or at its submit when nothing was
  // in flight): the contract is the same.
  auto released = [&](const char* state) {
    return invalid(std::string("after_task was already released for execution (") + state +
                   "); add the dependency right after submitting it, or while it still waits "
                   "for a producer");
  };
  if (after < tail_ || consumer.id != after) return released("it has completed");
  // HBG holds every guard until the orchestration returned, TMR the latest task's. Any
  // other task is held here by one more pending count, taken only while it is still
  // positive: a task whose producers all completed was released and may be running.
  const bool held_by_guard = options_.build_graph_first || deferred_ == &consumer;
  if (!held_by_guard) {
    int32_t pending = consumer.pending.load(std::memory_order_acquire);
    do {
      if (pending <= 0) return released("every task it waited for had completed");
    } while (
        !consumer.pending.compare_exchange_weak(pending, pending + 1, std::memory_order_acq_rel));
  }
  const int rc = link_dependency(before, after, consumer);
  if (!held_by_guard) drop_guard(consumer, /*wake=*/true);  // our extra count
  return rc;
}

int Orchestrator::link_dependency(uint64_t before, uint64_t after, TaskSlot& consumer) {
  if (options_.observer != nullptr)
    options_.observer->on_dependency(before - run_first_, after - run_first_);
  if (before < tail_) return SIMPLER_OK;  // reclaimed, hence completed
  TaskSlot& producer = chip_.slot(before);
  if (producer.dedup_stamp == after) return SIMPLER_OK;  // already linked
  if (pool_head_ - pool_tail_ == pool_size_) {
    // make_room would release the deferred task; `after` must stay unreleased meanwhile.
    TaskSlot* keep = deferred_ == &consumer ? deferred_ : nullptr;
    if (keep != nullptr) deferred_ = nullptr;
    const bool room = make_room("dependency pool", "dep_pool_size", SIMPLER_CHIP_ERR_RING_DEADLOCK);
    if (keep != nullptr) deferred_ = keep;
    if (!room) return status();
  }
  if (before < tail_) return SIMPLER_OK;
  producer.dedup_stamp = after;
  if (producer.done_id.load(std::memory_order_acquire) == before) return SIMPLER_OK;
  consumer.pending.fetch_add(1, std::memory_order_relaxed);  // a guard keeps it above zero
  if (link(producer, consumer)) {
    // Edges are reclaimed in task order with the slot that records pool_end; the newest
    // task is reclaimed last, so the edge outlives both ends (and pool_end stays monotonic).
    chip_.slot(head_ - 1).pool_end = pool_head_;
  } else {
    consumer.pending.fetch_sub(1, std::memory_order_relaxed);
  }
  return SIMPLER_OK;
}

bool Orchestrator::wait_for_accessors(const ChipTensor& t, AccessKind kind) {
  release_deferred();  // the latest task may be one of them: it must be able to run
  deps_.clear();
  tmap_.conflicts(t, kind, deps_);
  for (uint64_t id : deps_) {
    if (id < tail_ || id >= head_) continue;  // reclaimed, hence completed
    wait_for_completion(id, /*stop_on_error=*/true);
    if (run_->status.failed()) return false;
  }
  return true;
}

bool Orchestrator::value_access(const char* api, const ChipTensor* t, int64_t index,
                                const void* buf, size_t size, bool write, uint8_t** addr) {
  auto invalid = [&](const std::string& why) {
    fail(SIMPLER_CHIP_ERR_INVALID_ARGS, std::string(api) + ": " + why);
    return false;
  };
  if (t == nullptr || buf == nullptr) return invalid("the tensor and the buffer must not be null");
  if (size == 0) return invalid("size is 0");
  std::string why;
  if (!check_device_tensor(*t, &why)) return invalid(why);
  if (!addresses_.contains(t->buffer.addr, t->buffer.size, &why)) return invalid(why);
  uint64_t offset = 0;
  if (!element_byte_offset(*t, index, &offset, &why)) return invalid(why);
  if (offset > t->buffer.size || size > t->buffer.size - offset) {
    return invalid(counted(size, "byte") + " at element " + std::to_string(index) +
                   ": past the end of the tensor's buffer");
  }
  if (head_ != run_first_) {
    if (building_) {
      return invalid(
          "build_graph_first runs the graph after the orchestration returns, so values "
          "can only be read or written before the first submit");
    }
    // Ordered like a task accessing the view: a read waits for the tasks that write it, a
    // write also for those that read it (the tensor map knows them); unrelated tasks keep
    // running. NODEP accesses are not tracked, so they are not waited for.
    if (!wait_for_accessors(*t, write ? AccessKind::Write : AccessKind::Read)) return false;
  }
  *addr = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(t->buffer.addr)) + offset;
  return true;
}

int Orchestrator::read_value(const ChipTensor* t, int64_t index, void* out, size_t size) {
  if (int code = status()) return code;
  bump_progress();
  uint8_t* addr = nullptr;
  if (!value_access("read_value", t, index, out, size, /*write=*/false, &addr)) return status();
  std::memcpy(out, addr, size);
  return SIMPLER_OK;
}

int Orchestrator::write_value(const ChipTensor* t, int64_t index, const void* in, size_t size) {
  if (int code = status()) return code;
  bump_progress();
  uint8_t* addr = nullptr;
  if (!value_access("write_value", t, index, in, size, /*write=*/true, &addr)) return status();
  std::memcpy(addr, in, size);
  return SIMPLER_OK;
}

int Orchestrator::fatal(const char* message) {
  bump_progress();
  chip_.fail(
      *run_, SIMPLER_CHIP_ERR_ORCH_FATAL,
      std::string("orchestration fatal: ") + (message != nullptr ? message : "(no message)"));
  return SIMPLER_CHIP_ERR_ORCH_FATAL;
}

void Orchestrator::log(int32_t level, const char* message) {
  bump_progress();
  // The orchestration API's levels (DEBUG 0 .. ERROR 3) onto the process sink's
  // (Python's numbers); the sink's threshold ($SIMPLER_LOG_LEVEL) filters.
  static constexpr int kLevels[] = {SIMPLER_LOG_LEVEL_DEBUG, SIMPLER_LOG_LEVEL_INFO,
                                    SIMPLER_LOG_LEVEL_WARNING, SIMPLER_LOG_LEVEL_ERROR};
  const int mapped =
      kLevels[level < SIMPLER_LOG_DEBUG ? 0 : (level > SIMPLER_LOG_ERROR ? 3 : level)];
  simpler_log(mapped, "orch", "%s: %s", program_->func_name.c_str(),
              message != nullptr ? message : "(null)");
}

}  // namespace simpler::rt
