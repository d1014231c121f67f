// One access made in two tensor maps (with and without grids) whose answers must agree.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "engine/tensor_map.h"

namespace simpler::rt::testing {

// Half reads, three in ten writes, the rest read-writes.
inline AccessKind random_access_kind(std::mt19937_64& rng) {
  const uint64_t roll = rng() % 10;
  return roll < 5 ? AccessKind::Read : (roll < 8 ? AccessKind::Write : AccessKind::ReadWrite);
}

// Makes the access in both maps (after a conflicts() query in both when `query_first`) and
// reports the first answer that differs; `accepted` is the map with grids' answer.
inline ::testing::AssertionResult same_access(TensorMap& grids, TensorMap& lanes, uint64_t task,
                                              const ChipTensor& view, AccessKind kind,
                                              bool query_first, bool& accepted) {
  using Ids = std::set<uint64_t>;
  if (query_first) {
    std::vector<uint64_t> cg, cl;
    grids.conflicts(view, kind, cg);
    lanes.conflicts(view, kind, cl);
    if (Ids(cg.begin(), cg.end()) != Ids(cl.begin(), cl.end()))
      return ::testing::AssertionFailure() << "conflicts differ at task " << task;
  }
  std::vector<uint64_t> dg, dl;
  accepted = grids.access(task, view, kind, dg);
  const bool accepted_by_lanes = lanes.access(task, view, kind, dl);
  if (accepted != accepted_by_lanes)
    return ::testing::AssertionFailure() << "acceptance differs at task " << task;
  if (Ids(dg.begin(), dg.end()) != Ids(dl.begin(), dl.end()))
    return ::testing::AssertionFailure() << "dependencies differ at task " << task;
  if (grids.live_entries() != lanes.live_entries())
    return ::testing::AssertionFailure() << "live entries differ at task " << task;
  return ::testing::AssertionSuccess();
}

}  // namespace simpler::rt::testing
