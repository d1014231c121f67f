// C entry points: events.
#include <memory>

#include "api_support.h"

using simpler::sim::Device;
using simpler::sim::Driver;
using simpler::sim::EventState;
using simpler::sim::guarded;
using simpler::sim::Operation;
using simpler::sim::Stream;
using simpler::sim::StreamOp;
using simpler::sim::StreamOpKind;
using simpler::sim::token_of;

extern "C" {

int sim_event_create(sim_event_t* out_event) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kEventCreate);
    if (out_event == nullptr) return SIM_ERR_INVALID_VALUE;
    *out_event = nullptr;
    return simpler::sim::on_current_device(driver, [&](Device& device) {
      if (int fault = driver.stats().take_fault(Operation::kEventCreate)) return fault;
      auto event = std::make_shared<EventState>(device.id);
      *out_event = simpler::sim::event_handle(driver.events().add(std::move(event)));
      return SIMPLER_OK;
    });
  });
}

int sim_event_record(sim_event_t event, sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kEventRecord);
    std::shared_ptr<EventState> target = driver.events().find(token_of(event));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    return driver.streams().with(token_of(stream), [&](Stream& on) {
      if (on.device() != target->device()) return SIM_ERR_WRONG_DEVICE;
      if (int fault = driver.stats().take_fault(Operation::kEventRecord)) return fault;
      StreamOp op;
      op.kind = StreamOpKind::kRecordEvent;
      op.event = target;
      op.event_generation = target->next_generation();
      const uint64_t generation = op.event_generation;
      const int status = on.enqueue(std::move(op));
      if (status != SIMPLER_OK) target->signal(generation);  // never leave waiters hanging
      return status;
    });
  });
}

int sim_stream_wait_event(sim_stream_t stream, sim_event_t event) {
  return guarded([&] {
    Driver& driver = Driver::instance();
    std::shared_ptr<EventState> target = driver.events().find(token_of(event));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    return driver.streams().with(token_of(stream), [&](Stream& on) {
      const uint64_t generation = target->latest_generation();
      if (target->reached(generation)) return SIMPLER_OK;  // unrecorded or already reached
      StreamOp op;
      op.kind = StreamOpKind::kWaitEvent;
      op.event = target;
      op.event_generation = generation;
      return on.enqueue(std::move(op));
    });
  });
}

int sim_event_synchronize(sim_event_t event) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kEventSynchronize);
    std::shared_ptr<EventState> target = driver.events().find(token_of(event));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    if (int fault = driver.stats().take_fault(Operation::kEventSynchronize)) return fault;
    target->wait(target->latest_generation());
    return SIMPLER_OK;
  });
}

int sim_event_query(sim_event_t event) {
  return guarded([&] {
    return Driver::instance().events().with(token_of(event), [](EventState& target) {
      return target.complete() ? SIMPLER_OK : SIMPLER_NOT_READY;
    });
  });
}

int sim_event_destroy(sim_event_t event) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kEventDestroy);
    if (!driver.events().find(token_of(event))) return SIM_ERR_INVALID_HANDLE;
    if (int fault = driver.stats().take_fault(Operation::kEventDestroy)) return fault;
    // Pending records/waits keep their own reference; the handle dies now.
    return driver.events().remove(token_of(event)) ? SIMPLER_OK : SIM_ERR_INVALID_HANDLE;
  });
}

}  // extern "C"
