#include "abi/staging.h"

#include <algorithm>
#include <string>

#include "abi/abi_error.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {
namespace {

struct HostView {
  uint32_t arg;
  uint64_t lo;  // absolute host byte range touched by the view
  uint64_t hi;
  uint64_t first;  // lo relative to buffer.addr
};

bool reads(ArgDirection d) { return d == ArgDirection::IN || d == ArgDirection::INOUT; }
bool writes(ArgDirection d) { return d == ArgDirection::OUT || d == ArgDirection::INOUT; }

// Calls fn(byte offset from buffer.addr, byte length) for each maximal run of elements
// that is contiguous in the innermost dimension.
template <typename Fn>
void for_each_run(const ChipTensor& t, Fn&& fn) {
  const int64_t numel = tensor_numel(t);
  if (numel == 0) return;
  const int64_t esz = static_cast<int64_t>(element_size(static_cast<DataType>(t.dtype)));
  if (tensor_is_contiguous(t)) {
    fn(static_cast<uint64_t>(t.start_offset * esz), static_cast<uint64_t>(numel * esz));
    return;
  }
  const uint32_t n = t.ndims;
  const bool inner_dense = t.strides[n - 1] == 1;
  const uint32_t outer = inner_dense ? n - 1 : n;
  const int64_t run = inner_dense ? t.shapes[n - 1] * esz : esz;
  int64_t index[CHIP_TENSOR_MAX_DIMS] = {};
  while (true) {
    int64_t element = t.start_offset;
    for (uint32_t d = 0; d < outer; ++d) element += index[d] * t.strides[d];
    fn(static_cast<uint64_t>(element * esz), static_cast<uint64_t>(run));
    uint32_t d = outer;
    while (d > 0) {
      --d;
      if (++index[d] < t.shapes[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (outer == 0) return;
  }
}

}  // namespace

void Staging::stage(ChipStorageTaskArgs& args, std::span<const ArgDirection> signature) {
  std::vector<HostView> views;
  for (uint32_t i = 0; i < args.tensor_count; ++i) {
    ChipTensor& t = args.tensors[i];
    if (t.space != CHIP_SPACE_HOST) continue;
    auto [first, last] = tensor_byte_extent(t);
    if (first == last) {  // empty view: nothing to stage, nothing for a kernel to touch
      t.buffer = ChipBuffer{0, 0};
      t.start_offset = 0;
      t.space = CHIP_SPACE_DEVICE;
      continue;
    }
    views.push_back({i, t.buffer.addr + first, t.buffer.addr + last, first});
  }
  std::sort(views.begin(), views.end(),
            [](const HostView& a, const HostView& b) { return a.lo < b.lo; });

  size_t begin = 0;
  while (begin < views.size()) {
    size_t end = begin + 1;
    uint64_t group_hi = views[begin].hi;
    while (end < views.size() && views[end].lo < group_hi)
      group_hi = std::max(group_hi, views[end++].hi);
    const uint64_t group_lo = views[begin].lo;
    blocks_.push_back(DeviceAllocation::allocate(group_hi - group_lo, "staging a HOST tensor"));
    const uint64_t base = blocks_.back().address();

    for (size_t v = begin; v < end; ++v) {
      const HostView& hv = views[v];
      ChipTensor& t = args.tensors[hv.arg];
      const ArgDirection dir = signature[hv.arg];
      const uint64_t device_lo = base + (hv.lo - group_lo);
      if (reads(dir)) {
        check_driver(
            sim_memcpy(reinterpret_cast<void*>(device_lo), reinterpret_cast<const void*>(hv.lo),
                       hv.hi - hv.lo, SIM_MEMCPY_HOST_TO_DEVICE),
            "copying HOST tensor argument " + std::to_string(hv.arg) + " to the device");
      }
      const ChipTensor host_view = t;
      const int64_t esz = static_cast<int64_t>(element_size(static_cast<DataType>(t.dtype)));
      t.buffer = ChipBuffer{device_lo, hv.hi - hv.lo};
      t.start_offset -= static_cast<int64_t>(hv.first) / esz;
      t.space = CHIP_SPACE_DEVICE;
      if (writes(dir)) outputs_.push_back({host_view, device_lo - hv.lo});
    }
    begin = end;
  }
}

void Staging::copy_back() const {
  for (const Output& out : outputs_) {
    for_each_run(out.host_view, [&](uint64_t offset, uint64_t length) {
      const uint64_t host = out.host_view.buffer.addr + offset;
      check_driver(sim_memcpy(reinterpret_cast<void*>(host),
                              reinterpret_cast<const void*>(host + out.device_minus_host), length,
                              SIM_MEMCPY_DEVICE_TO_HOST),
                   "copying an output back to its HOST tensor");
    });
  }
}

int Staging::release() {
  while (!blocks_.empty()) {
    int status = blocks_.back().release();
    if (status != 0) return status;
    blocks_.pop_back();
  }
  outputs_.clear();
  return 0;
}

uint64_t Staging::bytes() const {
  uint64_t total = 0;
  for (const DeviceAllocation& b : blocks_) total += b.size();
  return total;
}

}  // namespace simpler::rt::host
