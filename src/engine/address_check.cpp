// The driver lookup behind AddressCheck (address_check.h).
#include "address_check.h"

#include "simpler/sim/sim_driver.h"

namespace simpler::rt {
namespace {

std::string range_text(uint64_t addr, uint64_t size) {
  return "bytes [" + std::to_string(addr) + ", +" + std::to_string(size) + ")";
}

}  // namespace

bool AddressCheck::begin_run(uint64_t heap_base, uint64_t heap_bytes) {
  // Read before this run checks anything: a free after the read changes it, so the next
  // run forgets what this one learnt (an entry filled after such a free is merely lost).
  uint64_t generation = 0;
  const bool have = sim_device_memory_generation(device_, &generation) == SIMPLER_OK;
  const bool keep = have && have_generation_ && generation == generation_ && count_ != 0 &&
                    ranges_[0].begin == heap_base && ranges_[0].end == heap_base + heap_bytes;
  have_generation_ = have;
  generation_ = generation;
  if (keep) return true;
  ranges_[0] = Range{heap_base, heap_base + heap_bytes};
  count_ = heap_bytes != 0 ? 1 : 0;
  next_ = 1;
  return false;
}

void AddressCheck::remember(uint64_t base, uint64_t size) {
  if (count_ < kSlots) {
    ranges_[count_++] = Range{base, base + size};
  } else {
    ranges_[next_] = Range{base, base + size};
    next_ = next_ + 1 < kSlots ? next_ + 1 : 1;
  }
}

bool AddressCheck::ask_driver(uint64_t addr, uint64_t size, std::string* why) {
  SimAllocation a{};
  const int status = sim_pointer_allocation(reinterpret_cast<const void*>(addr), &a);
  if (status != SIMPLER_OK) {
    *why = range_text(addr, size) + " are not device memory: no live allocation holds address " +
           std::to_string(addr) + " (" + simpler_status_name(status) +
           "; pass tensors the runtime gave you or that were allocated on the device)";
    return false;
  }
  if (a.device != device_) {
    *why = range_text(addr, size) + " are memory of device " + std::to_string(a.device) +
           "; this run executes on device " + std::to_string(device_);
    return false;
  }
  if (size > a.base + a.size - addr) {
    *why = range_text(addr, size) + " run past the end of their allocation (" +
           range_text(a.base, a.size) + ")";
    return false;
  }
  remember(a.base, a.size);
  return true;
}

}  // namespace simpler::rt
