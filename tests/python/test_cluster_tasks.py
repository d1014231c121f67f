"""Cluster (MIX) tasks from Python: a 'mix' kernel (cube and vector parts handing a tile
through the cluster buffer) via ChipCallable.from_kernel, in program and kernel mode; a task
that asks more clusters than the chip has is refused with ClusterUnavailableError; a wait
that can never end fails the run with KernelFaultError instead of hanging."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import (STATUS_CODES, ChipWorkerError, ClusterUnavailableError,
                            KernelFaultError, SimError, SimplerError)
from simpler.task_interface import (ArgDirection as D, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

# Block b owns chunk b of x/y. The AIC part puts 2x in the cluster buffer and sets flag 0
# once per AIV part; AIV part a adds 1 to its half and sets flag 1; the AIC part waits for
# both and stores y = 2x + 1. With stuck != 0 the AIV parts wait for flag 7 (never set).
MIX_KERNEL = r"""
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {
  const SimplerClusterOps* c = simpler_cluster(args);
  const ChipTensor* xt = simpler_tensor_arg(args, 0);
  const ChipTensor* yt = simpler_tensor_arg(args, 1);
  const int64_t chunk = xt->shapes[0] / simpler_block_num(args);
  const int64_t first = chunk * simpler_block_idx(args);
  float* buf = (float*)simpler_cluster_buffer(args);
  if (simpler_scalar_i64(args, 2) != 0) {
    if (simpler_core_type(args) == SIMPLER_CORE_AIV) simpler_cluster_wait_flag(args, 7);
    return;
  }
  if (simpler_core_type(args) == SIMPLER_CORE_AIC) {
    const float* x = (const float*)simpler_tensor_data(xt, 4) + first;
    for (int64_t i = 0; i < chunk; ++i) buf[i] = 2.0f * x[i];
    for (uint32_t a = 0; a < c->aiv_num; ++a) simpler_cluster_set_flag(args, 0);
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_wait_flag(args, 1) != 0) return;
    float* y = (float*)simpler_tensor_data(yt, 4) + first;
    for (int64_t i = 0; i < chunk; ++i) y[i] = buf[i];
  } else {
    if (simpler_cluster_wait_flag(args, 0) != 0) return;
    const int64_t half = chunk / 2;
    for (int64_t i = c->aiv_idx * half; i < (c->aiv_idx + 1) * half; ++i) buf[i] += 1.0f;
    simpler_cluster_set_flag(args, 1);
  }
}
"""
SIGNATURE = [(D.IN, DataType.FLOAT32), (D.OUT, DataType.FLOAT32), (D.SCALAR, DataType.INT64)]


@pytest.fixture(scope="module")
def mix_kernel(compiler):
    kernel = CoreCallable.build(SIGNATURE, compiler.compile_kernel(MIX_KERNEL, "mix"))
    assert kernel.core_type == "mix"
    return kernel


def _args(x, y, stuck=0):
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(x))
    args.add_tensor(ChipTensor.from_array(y))
    args.add_scalar(stuck)
    return args


def test_a_cluster_task_runs_its_parts_together(mix_kernel):
    clusters = sim.device_topology(2).clusters
    for blocks in (1, clusters):
        x = np.linspace(-2, 2, 64 * blocks, dtype=np.float32)
        y = np.zeros_like(x)
        with Worker(level=2, device_id=2) as w:
            h = w.register(ChipCallable.from_kernel(mix_kernel, block_num=blocks))
            w.init()
            w.run(h, _args(x, y))
        np.testing.assert_array_equal(y, 2 * x + 1)


def test_more_clusters_than_the_chip_has_is_refused(mix_kernel):
    clusters = sim.device_topology(2).clusters
    x = np.ones(64 * (clusters + 1), dtype=np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=2) as w:
        h = w.register(ChipCallable.from_kernel(mix_kernel, block_num=clusters + 1))
        w.init()
        with pytest.raises(ClusterUnavailableError) as info:
            w.run(h, _args(x, y))
    e = info.value
    assert isinstance(e, ChipWorkerError) and isinstance(e, SimplerError)
    assert e.code == STATUS_CODES["SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"]
    assert e.status_name == "SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"
    assert f"block_num <= {clusters}" in str(e)
    assert not y.any()  # nothing of the task ran


def test_a_flag_nobody_sets_fails_the_run_instead_of_hanging(mix_kernel):
    x = np.ones(64, dtype=np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=2) as w:
        h = w.register(ChipCallable.from_kernel(mix_kernel, block_num=1))
        w.init()
        with pytest.raises(KernelFaultError, match="waits for flag 7"):
            w.run(h, _args(x, y, stuck=1))
        w.run(h, _args(x, y))  # the context is fine afterwards
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_kernel_mode_runs_cluster_tasks(mix_kernel):
    sim.set_device(2)
    x = np.arange(128, dtype=np.float32)
    y = np.zeros_like(x)
    stream = sim.Stream()
    dx, dy = sim.malloc(x.nbytes), sim.malloc(y.nbytes)
    w = Worker(level=2, execution_mode="kernel", device_id=2)
    try:
        w.init(config=CallConfig())
        cid = w.kernel_prepare_callable(ChipCallable.from_kernel(mix_kernel, block_num=2))
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dx, x.shape, DataType.FLOAT32))
        args.add_tensor(ChipTensor.make(dy, y.shape, DataType.FLOAT32))
        args.add_scalar(0)
        sim.memcpy_htod(dx, x)
        w.kernel_launch(cid, args, caller_stream=stream.handle)
        stream.synchronize()
        sim.memcpy_dtoh(y, dy)
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_kernel_mode_refusal_raises_from_the_stream(mix_kernel):
    sim.set_device(2)
    clusters = sim.device_topology(2).clusters
    x = np.ones(64 * (clusters + 1), dtype=np.float32)
    stream = sim.Stream()
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    w = Worker(level=2, execution_mode="kernel", device_id=2)
    try:
        w.init(config=CallConfig())
        cid = w.kernel_prepare_callable(ChipCallable.from_kernel(mix_kernel,
                                                                 block_num=clusters + 1))
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dx, x.shape, DataType.FLOAT32))
        args.add_tensor(ChipTensor.make(dy, x.shape, DataType.FLOAT32))
        args.add_scalar(0)
        w.kernel_launch(cid, args, caller_stream=stream.handle)
        with pytest.raises(ClusterUnavailableError) as info:
            stream.synchronize()
        assert isinstance(info.value, SimError)
        assert info.value.code == STATUS_CODES["SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"]
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
