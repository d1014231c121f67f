// Program mode: ordering between runs through the host memory they stage.
//
// A run reads its HOST inputs at submit (staging) and writes its HOST outputs when it is
// completed (copy-back). So a run submitted after another that writes the same host bytes
// must wait for that copy-back first: to read the result (RAW) and so that its own
// copy-back lands last (WAW). A new output an earlier run reads (WAR) needs nothing: that
// input was staged at the earlier submit.
#include <algorithm>
#include <chrono>

#include "worker_core.h"

namespace simpler::detail {

namespace {

bool writes(ArgDirection d) { return d == ArgDirection::OUT || d == ArgDirection::INOUT; }

bool overlap(const HostRanges& a, const HostRanges& b) {
  for (const auto& [lo, hi] : a) {
    for (const auto& [blo, bhi] : b) {
      if (lo < bhi && blo < hi) return true;
    }
  }
  return false;
}

}  // namespace

void host_extents(const ChipStorageTaskArgs& args, const std::vector<ArgDirection>& directions,
                  HostRanges& touched, HostRanges& written) {
  for (uint32_t i = 0; i < args.tensor_count && i < CHIP_MAX_TENSOR_ARGS; ++i) {
    const ChipTensor& t = args.tensors[i];
    if (t.space != CHIP_SPACE_HOST) continue;
    std::pair<uint64_t, uint64_t> extent;
    try {
      extent = tensor_byte_extent(t);
    } catch (...) {
      continue;  // a malformed view: the submit refuses it
    }
    if (extent.first == extent.second) continue;  // empty: nothing staged, nothing written
    const std::pair range{t.buffer.addr + extent.first, t.buffer.addr + extent.second};
    touched.push_back(range);
    if (i < directions.size() && writes(directions[i])) written.push_back(range);
  }
}

void WorkerCore::fail_run(RunRecord& record, std::exception_ptr error) {
  in_flight.erase(record.run_id);
  record.error = std::move(error);
  record.finished.store(true, std::memory_order_release);
}

bool WorkerCore::settle_host_hazards(const HostRanges& touched, std::chrono::microseconds slice) {
  if (touched.empty() || in_flight.empty()) return true;
  const auto deadline = std::chrono::steady_clock::now() + slice;
  for (auto it = in_flight.begin(); it != in_flight.end();) {
    const std::shared_ptr<RunRecord> record = (it++)->second;  // completing erases it
    if (!overlap(record->host_writes, touched)) continue;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        deadline - std::chrono::steady_clock::now());
    try {
      if (!chip->wait(record->run_id, std::max(left, std::chrono::microseconds(0)))) return false;
    } catch (...) {
      fail_run(*record, std::current_exception());  // its handle reports it
      continue;
    }
    complete_run(*record);  // a failed run keeps its error: the new run proceeds
  }
  return true;
}

}  // namespace simpler::detail
