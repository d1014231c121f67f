// Scheduling cluster (MIX) tasks: reservation, hand-over, start, completion.
#include "cluster_dispatch.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "block_runner.h"
#include "chip_state.h"
#include "cluster_fibers.h"
#include "simpler/abi/status.h"

namespace simpler::rt {
namespace {

// Cluster c is AIC core c and AIV cores 2c, 2c+1 (ChipState::init_cores numbering).
template <typename F>
void for_each_core(uint32_t cluster, F&& f) {
  f(static_cast<uint32_t>(SIMPLER_CORE_AIC), cluster);
  for (uint32_t i = 0; i < SIMPLER_CLUSTER_AIV_CORES; ++i)
    f(static_cast<uint32_t>(SIMPLER_CORE_AIV), SIMPLER_CLUSTER_AIV_CORES * cluster + i);
}

// Holds an idle core for the reservation, or marks a busy one so that its release hands
// it over (and counts it as missing until then).
void reserve_core(ChipState& chip, uint32_t type, uint32_t id) {
  std::atomic<uint32_t>& word = chip.core_claimed[type][id];
  ClusterPool& pool = chip.clusters;
  for (;;) {
    uint32_t v = word.load(std::memory_order_acquire);
    if (v == kCoreFree) {
      if (word.compare_exchange_weak(v, kCoreHeld, std::memory_order_acq_rel)) return;
    } else {  // kCoreBusy: the only other state while this thread owns the reservation
      pool.missing.fetch_add(1, std::memory_order_relaxed);
      if (word.compare_exchange_weak(v, kCoreBusyReserved, std::memory_order_acq_rel)) return;
      pool.missing.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

// The clusters with the most idle cores: the reserved task waits for the fewest blocks.
void choose_clusters(ChipState& chip, uint32_t count, uint32_t* chosen) {
  const uint32_t clusters = chip.clusters.clusters;
  std::vector<std::pair<uint32_t, uint32_t>> busy(clusters);  // (busy cores, cluster)
  for (uint32_t c = 0; c < clusters; ++c) {
    uint32_t n = 0;
    for_each_core(c, [&](uint32_t type, uint32_t id) {
      n += chip.core_claimed[type][id].load(std::memory_order_relaxed) != kCoreFree;
    });
    busy[c] = {n, c};
  }
  std::partial_sort(busy.begin(), busy.begin() + count, busy.end());
  for (uint32_t i = 0; i < count; ++i) chosen[i] = busy[i].second;
}

const ClusterBuffers* cluster_buffers(ClusterPool& pool) {
  std::lock_guard<std::mutex> lock(pool.buffers_mutex);
  if (!pool.buffers) pool.buffers = ClusterBuffers::create(pool.clusters);
  return pool.buffers.get();
}

void start_reserved(ChipState& chip, const uint32_t* here = nullptr, bool orchestrating = false);

// A scheduler that ran a part goes back to dispatching, inside the awake budget: while the
// budget is full (another scheduler entered it meanwhile) it parks until there is room, as
// an idle scheduler would. At shutdown it counts itself in anyway: its loop leaves the
// budget on the way out.
void rejoin_awake(ChipState& chip) {
  while (!chip.try_enter_awake()) {
    const uint32_t ticket = chip.scheduler_parker.prepare_wait();
    if (chip.shutdown.load(std::memory_order_acquire)) {
      chip.scheduler_parker.cancel_wait();
      chip.awake.fetch_add(1, std::memory_order_seq_cst);
      return;
    }
    if (chip.awake_room()) {
      chip.scheduler_parker.cancel_wait();
    } else {
      chip.scheduler_parker.wait(ticket);
    }
  }
}

// After the last part of a cluster task returned (on that part's helper thread): frees the
// cores (one may complete a new reservation), completes the task, starts what was handed.
void finish_cluster_task(ChipState& chip, TaskSlot& task, const std::vector<uint32_t>& clusters) {
  bool handed = false;
  for (uint32_t c : clusters) {
    for_each_core(c, [&](uint32_t type, uint32_t id) {
      if (chip.release_core(type, id) &&
          chip.clusters.missing.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        handed = true;
      }
    });
  }
  chip.clusters.completed.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t b = 0; b < task.block_num; ++b)
    finish_block(chip, task, /*orchestrating=*/false, /*on_dispatcher=*/false);
  if (handed) start_reserved(chip);
}

// No thread could be had for the task's parts: the run fails, the task completes unrun.
void not_started(ChipState& chip, TaskSlot& task, const std::vector<uint32_t>& clusters) {
  chip.fail(*task.run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
            "cannot start the helper threads of " + task_name(task.id - task.run->first_id) +
                " (a cluster task runs one host thread per core)");
  finish_cluster_task(chip, task, clusters);  // skipped: the run failed
}

// Starts the reserved task: every core of its clusters is held for it. With `here`, the
// calling thread runs the first part itself as that lane (ClusterCrew::launch), also when
// single-core tasks are ready: they stay queued for any thread that comes free, while a
// task handed to a helper would wait for that one helper to wake up and get a hardware
// thread (the fused prefill's slow mode). `orchestrating`: the caller is not in the
// schedulers' awake budget, so it neither leaves nor rejoins it.
void start_reserved(ChipState& chip, const uint32_t* here, bool orchestrating) {
  ClusterPool& pool = chip.clusters;
  TaskSlot& task = *pool.task;
  std::vector<uint32_t> clusters(pool.chosen.get(), pool.chosen.get() + task.block_num);
  for (uint32_t c : clusters) {
    for_each_core(c, [&](uint32_t type, uint32_t id) {
      chip.core_claimed[type][id].store(kCoreBusy, std::memory_order_relaxed);
    });
  }
  // The next cluster task may reserve now (after the cores above are busy, not held).
  pool.reserving.store(false, std::memory_order_release);
  if (!chip.ready[SIMPLER_CORE_MIX].looks_empty()) chip.wake_schedulers(1);

  const ClusterBuffers* buffers = cluster_buffers(pool);
  if (buffers == nullptr) {
    chip.fail(*task.run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
              "cannot allocate the cluster buffers for " + task_name(task.id - task.run->first_id) +
                  " (out of host memory)");
  }
  const uint32_t parts = task.block_num * kClusterParts;
  // A one-cluster task runs as fibers of one thread unless idle helpers are awake to take
  // its parts at once: of the starting scheduler, else of one helper (one wake-up instead
  // of one per part, and no parked hand-offs between the parts).
  ClusterCrew& crew = *pool.crew;
  const bool cooperative = task.block_num == 1 && !crew.awake_idle(parts - 1);
  for (uint32_t b = 0; b < task.block_num; ++b)
    pool.sync[clusters[b]].start(&chip, &task, clusters[b], cooperative);
  auto part = [&chip, &task, clusters, buffers](uint32_t i, uint32_t lane) {
    const uint32_t block = i / kClusterParts, within = i % kClusterParts;
    const uint32_t cluster = clusters[block];
    ClusterSync& sync = chip.clusters.sync[cluster];
    if (buffers != nullptr) {
      const SimplerClusterOps ops = sync.ops_for(within, buffers->at(cluster));
      const uint32_t type = within == 0 ? SIMPLER_CORE_AIC : SIMPLER_CORE_AIV;
      const uint32_t core =
          within == 0 ? cluster : SIMPLER_CLUSTER_AIV_CORES * cluster + within - 1;
      run_block(chip, task, block, type, core, lane, &ops);
    }
    sync.part_exit(within);
  };
  auto done = [&chip, &task, clusters](uint32_t) { finish_cluster_task(chip, task, clusters); };
  // All parts as fibers of the calling thread (part 0 as `lane`, the others on their cores'
  // lanes). False if the fibers' stacks could not be mapped: nothing ran.
  auto run_as_fibers = [&chip, &crew, parts, clusters, part](uint32_t lane) {
    const uint32_t first_core = clusters[0] * kClusterParts;
    return run_parts_cooperatively(parts, chip.clusters.sync[clusters[0]], [&](uint32_t i) {
      part(i, i == 0 ? lane : crew.core_lane(first_core + i));
    });
  };
  // Without fibers the parts go to helper threads after all (threaded waits); with
  // `caller_lane` the calling thread runs part 0.
  auto run_threaded = [&chip, &task, &crew, parts, clusters, part,
                       done](const uint32_t* caller_lane) {
    chip.clusters.sync[clusters[0]].start(&chip, &task, clusters[0]);
    if (!crew.launch(parts, part, done, caller_lane)) not_started(chip, task, clusters);
  };
  const bool scheduler_here = here != nullptr && !orchestrating;
  if (here != nullptr) {
    // The calling scheduler becomes a part: like a helper it is outside the schedulers'
    // awake budget meanwhile, so another scheduler may take the ready work (queued, any
    // thread that comes free takes it; a task handed to a helper waits for that helper).
    if (scheduler_here) chip.leave_awake();
    if (chip.has_ready()) chip.wake_schedulers(1);
  }
  bool launched = true;
  if (cooperative && here != nullptr) {
    if (run_as_fibers(*here)) {
      done(*here);
    } else {
      run_threaded(nullptr);
    }
  } else if (cooperative) {
    // One helper runs them all and completes the task as its batch's done, when it counts
    // as idle again: the completion may start a task that needs every helper of the chip.
    auto as_fibers = std::make_shared<bool>(false);
    launched = crew.launch(
        1,
        [run_as_fibers, run_threaded, as_fibers](uint32_t, uint32_t lane) {
          *as_fibers = run_as_fibers(lane);
          if (!*as_fibers) run_threaded(&lane);
        },
        [done, as_fibers](uint32_t lane) {
          if (*as_fibers) done(lane);
        });
  } else {
    launched = crew.launch(parts, part, done, here);
  }
  if (scheduler_here) rejoin_awake(chip);
  if (!launched) not_started(chip, task, clusters);
}

}  // namespace

bool start_cluster_task(ChipState& chip, const uint32_t* here, bool orchestrating) {
  ClusterPool& pool = chip.clusters;
  if (chip.ready[SIMPLER_CORE_MIX].looks_empty()) return false;
  bool idle = false;
  if (!pool.reserving.compare_exchange_strong(idle, true, std::memory_order_acquire)) return false;
  TaskSlot* task = chip.ready[SIMPLER_CORE_MIX].try_pop();
  if (task == nullptr) {
    pool.reserving.store(false, std::memory_order_release);
    return false;
  }
  pool.task = task;
  choose_clusters(chip, task->block_num, pool.chosen.get());
  pool.missing.store(1, std::memory_order_relaxed);  // this thread's guard
  for (uint32_t i = 0; i < task->block_num; ++i) {
    for_each_core(pool.chosen[i],
                  [&](uint32_t type, uint32_t id) { reserve_core(chip, type, id); });
  }
  if (pool.missing.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
  start_reserved(chip, here, orchestrating);
  return true;
}

void release_core(ChipState& chip, uint32_t type, uint32_t core) {
  if (chip.release_core(type, core) &&
      chip.clusters.missing.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    start_reserved(chip);
  }
}

}  // namespace simpler::rt
