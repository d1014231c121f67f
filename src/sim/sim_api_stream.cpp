// C entry points: streams and the operations enqueued on them.
#include <memory>

#include "api_support.h"

using simpler::sim::Device;
using simpler::sim::Driver;
using simpler::sim::guarded;
using simpler::sim::Operation;
using simpler::sim::Stream;
using simpler::sim::StreamOp;
using simpler::sim::StreamOpKind;
using simpler::sim::token_of;

namespace {

// Validated stream + fault check + enqueue: the shared tail of every async entry point.
int enqueue_on(Driver& driver, sim_stream_t stream, Operation op, StreamOp&& record) {
  return driver.streams().with(token_of(stream), [&](Stream& target) {
    if (int fault = driver.stats().take_fault(op)) return fault;
    return target.enqueue(std::move(record));
  });
}

}  // namespace

extern "C" {

int sim_stream_create(sim_stream_t* out_stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kStreamCreate);
    if (out_stream == nullptr) return SIM_ERR_INVALID_VALUE;
    *out_stream = nullptr;
    return simpler::sim::on_current_device(driver, [&](Device& device) {
      if (int fault = driver.stats().take_fault(Operation::kStreamCreate)) return fault;
      auto stream = std::make_shared<Stream>(device.id, driver);
      *out_stream = simpler::sim::stream_handle(driver.streams().add(std::move(stream)));
      return SIMPLER_OK;
    });
  });
}

int sim_stream_destroy(sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kStreamDestroy);
    std::shared_ptr<Stream> target = driver.streams().find(token_of(stream));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    if (target->on_executor_thread()) return SIM_ERR_BUSY;  // would wait for itself
    if (int fault = driver.stats().take_fault(Operation::kStreamDestroy)) return fault;
    if (!driver.streams().remove(token_of(stream))) return SIM_ERR_INVALID_HANDLE;  // lost a race
    return target->close();
  });
}

int sim_stream_synchronize(sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kStreamSynchronize);
    std::shared_ptr<Stream> target = driver.streams().find(token_of(stream));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    if (int fault = driver.stats().take_fault(Operation::kStreamSynchronize)) return fault;
    return target->synchronize();
  });
}

int sim_stream_wait(sim_stream_t stream, int64_t timeout_us) {
  return guarded([&] {
    std::shared_ptr<Stream> target = Driver::instance().streams().find(token_of(stream));
    if (!target) return SIM_ERR_INVALID_HANDLE;
    return target->wait_for(timeout_us);
  });
}

int sim_stream_query(sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kStreamQuery);
    return driver.streams().with(token_of(stream), [&](Stream& target) {
      if (int fault = driver.stats().take_fault(Operation::kStreamQuery)) return fault;
      return target.query();
    });
  });
}

int sim_stream_device(sim_stream_t stream, int32_t* out_device) {
  return guarded([&] {
    if (out_device == nullptr) return SIM_ERR_INVALID_VALUE;
    return Driver::instance().streams().with(token_of(stream), [&](Stream& target) {
      *out_device = target.device();
      return SIMPLER_OK;
    });
  });
}

int sim_memcpy_async(void* dst, const void* src, size_t size, SimMemcpyKind kind,
                     sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMemcpy);
    const int kind_value = simpler::sim::raw_kind(kind);
    if (int status = simpler::sim::validate_copy(driver, dst, src, size, kind_value);
        status != SIMPLER_OK)
      return status;
    StreamOp op;
    op.kind = StreamOpKind::kMemcpy;
    op.copy_kind = static_cast<SimMemcpyKind>(kind_value);  // validated above
    op.dst = dst;
    op.src = src;
    op.size = size;
    return enqueue_on(driver, stream, Operation::kMemcpy, std::move(op));
  });
}

int sim_memset_async(void* device_ptr, int value, size_t size, sim_stream_t stream) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMemset);
    if (size != 0) {
      if (device_ptr == nullptr) return SIM_ERR_INVALID_VALUE;
      if (int status = driver.check_device_range(device_ptr, size); status != SIMPLER_OK)
        return status;
    }
    StreamOp op;
    op.kind = StreamOpKind::kMemset;
    op.dst = device_ptr;
    op.memset_value = value;
    op.size = size;
    return enqueue_on(driver, stream, Operation::kMemset, std::move(op));
  });
}

int sim_launch_host_func(sim_stream_t stream, sim_host_fn fn, void* user_data) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kHostFunc);
    if (fn == nullptr) return SIM_ERR_INVALID_VALUE;
    StreamOp op;
    op.kind = StreamOpKind::kHostFunc;
    op.host_fn = fn;
    op.user_data = user_data;
    return enqueue_on(driver, stream, Operation::kHostFunc, std::move(op));
  });
}

int sim_launch_device_job(sim_stream_t stream, sim_device_job_fn job, void* user_data,
                          sim_job_cleanup_fn cleanup) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kLaunch);
    if (job == nullptr) return SIM_ERR_INVALID_VALUE;
    return driver.streams().with(token_of(stream), [&](Stream& target) {
      StreamOp op;
      op.kind = StreamOpKind::kDeviceJob;
      op.job = job;
      op.cleanup = cleanup;
      op.user_data = user_data;
      // A launch fault is not the caller's status: it surfaces on the stream when the job
      // would have run, like a failure during execution.
      op.preset_status = driver.stats().take_fault(Operation::kLaunch);
      return target.enqueue(std::move(op));
    });
  });
}

}  // extern "C"
