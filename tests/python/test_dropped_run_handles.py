"""Runs whose RunHandle was dropped (fire and forget): the Worker keeps their host arrays
alive until they completed. Each scenario runs in a fresh interpreter (subprocess, with a
timeout): the regression this guards against wrote outputs into freed memory and killed
the process."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import PROGRAMS

SCRIPT = textwrap.dedent(f"""
    import gc, os, weakref
    import numpy as np
    from simpler import KernelCompiler, Worker
    from simpler.task_interface import (ArgDirection as D, ChipCallable, ChipStorageTaskArgs,
                                        ChipTensor, CoreCallable, DataType)
    cc = KernelCompiler()
    src = lambda name: open(os.path.join({str(PROGRAMS)!r}, name)).read()

    def program(kernel, orch, entry, sig, kernel_sig):
        k = CoreCallable.build(kernel_sig, cc.compile_kernel(src(kernel), "aiv"))
        return ChipCallable.build(sig, entry, cc.compile_orchestration(src(orch), entry=entry),
                                  children=[(0, k)])

    add = program("add_scalar_kernel.cpp", "add_scalar_orch.cpp", "add_scalar_entry",
                  [D.IN, D.OUT, D.SCALAR], [D.IN, D.OUT, D.SCALAR])
    hold = program("wait_flag_kernel.cpp", "wait_flag_orch.cpp", "wait_flag_entry",
                   [D.INOUT, D.OUT], [D.INOUT, D.OUT])
    with Worker(level=2, device_id=0) as w:
        w.init()
        h_add, h_hold = w.register(add), w.register(hold)
        flag = w.malloc(4)
        w.copy_to(flag, np.zeros(1, np.int32))
        held_out = np.zeros(1, np.int32)
        held_args = ChipStorageTaskArgs()
        held_args.add_tensor(ChipTensor.make(flag, (1,), DataType.INT32))
        held_args.add_tensor(ChipTensor.from_array(held_out))
        held = w.submit(h_hold, held_args)      # every run below queues behind this one
        x = np.arange(256, dtype=np.float32)
        outputs, queued = [], []
        for i in range(200):
            y = np.zeros_like(x)
            a = ChipStorageTaskArgs()
            a.add_tensor(ChipTensor.from_array(x)); a.add_tensor(ChipTensor.from_array(y))
            a.add_scalar_f32(float(i))
            queued.append(a); outputs.append(weakref.ref(y))
        for a in queued:
            w.submit(h_add, a)                   # the handle is dropped at once
        del queued, a, y
        gc.collect()
        freed = sum(ref() is None for ref in outputs)
        print("freed while queued:", freed, flush=True)
        w.copy_to(flag, np.ones(1, np.int32))
        held.wait(60)
    print("closed", flush=True)
""")


def test_a_dropped_handle_keeps_its_runs_host_arrays_until_the_run_completed():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "freed while queued: 0" in r.stdout, r.stdout + r.stderr
    assert "closed" in r.stdout


def test_runs_submitted_without_keeping_the_handle_do_not_hold_device_memory(add_scalar_callable):
    # Each run stages 2 MiB of HOST arrays; 600 of them held until close() would need more
    # than the device's 1 GiB (a submit loop failed with SIM_ERR_OUT_OF_MEMORY at ~480).
    # A blocking run every 50 keeps the runs actually in flight few, whatever the load.
    from simpler import Worker
    x = np.zeros(1 << 18, np.float32)
    with Worker(level=2, device_id=0) as w:
        w.init()
        h = w.register(add_scalar_callable)
        w.run(h, x, np.zeros_like(x), 1.0)              # the engine's heap ring is taken
        baseline = w.committed_device_memory()
        for i in range(600):
            if i % 50 == 49:
                w.run(h, x, np.zeros_like(x), 1.0)      # every earlier run finished
            else:
                w.submit(h, x, np.zeros_like(x), 1.0)   # the handle is dropped at once
        last = np.zeros_like(x)
        w.run(h, x, last, 2.0)
        assert (last == 2.0).all()
        held = w.committed_device_memory() - baseline
        assert held < 384 << 20, f"{held >> 20} MiB still held by finished runs"


def test_unregister_completes_the_callables_finished_runs_and_refuses_a_running_one(
        add_scalar_callable, wait_flag_callable):
    # A finished run whose handle was dropped kept its callable "used by 1 prepared run;
    # finalize them first" until close(): nothing the caller could do.
    from simpler import Worker
    from simpler.errors import SimplerRuntimeError
    from simpler.task_interface import ChipStorageTaskArgs, ChipTensor, DataType
    with Worker(level=2, device_id=0) as w:
        w.init()
        add, hold = w.register(add_scalar_callable), w.register(wait_flag_callable)
        x = np.arange(8, dtype=np.float32)
        y = np.zeros_like(x)
        w.submit(add, x, y, 1.0)                     # the handle is dropped at once
        w.run(add, x, np.zeros_like(x), 1.0)         # the dropped run finished before this one
        w.unregister(add)
        assert (y == x + 1).all()                    # completed: its output is back
        flag = w.malloc(4)
        w.copy_to(flag, np.zeros(1, np.int32))
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(flag, (1,), DataType.INT32))
        args.add_tensor(ChipTensor.from_array(np.zeros(1, np.int32)))
        run = w.submit(hold, args)
        with pytest.raises(SimplerRuntimeError, match="still running; wait for its RunHandle"):
            w.unregister(hold)
        w.copy_to(flag, np.ones(1, np.int32))
        run.wait(60)
        w.unregister(hold)


CTRL_C_AFTER_SUBMIT = SCRIPT.split("    with Worker(")[0] + textwrap.dedent("""
    class CtrlCAfterSubmit:
        # The native worker, with a Ctrl-C arriving just after its submit returned.
        def __init__(self, native): self._n = native
        def __getattr__(self, name): return getattr(self._n, name)
        def submit(self, *a, **k):
            self._n.submit(*a, **k)
            raise KeyboardInterrupt

    with Worker(level=2, device_id=0) as w:
        w.init()
        h_add, h_hold = w.register(add), w.register(hold)
        flag = w.malloc(4)
        w.copy_to(flag, np.zeros(1, np.int32))
        held = w.submit(h_hold, ChipTensor.make(flag, (1,), DataType.INT32), np.zeros(1, np.int32))
        x = np.arange(256, dtype=np.float32)
        y = np.zeros_like(x)
        ref = weakref.ref(y)
        real, w._native = w._native, CtrlCAfterSubmit(w._native)
        try:
            w.submit(h_add, x, y, 1.0)                 # queued behind the held run
        except KeyboardInterrupt:
            pass
        w._native = real
        del y
        gc.collect()
        print("freed while queued:", ref() is None, flush=True)
        w.copy_to(flag, np.ones(1, np.int32))
        held.wait(60)
    print("closed", flush=True)
""")


def test_a_ctrl_c_just_after_submit_keeps_the_runs_host_arrays():
    # The arrays were leased only once the RunHandle existed: a Ctrl-C between the native
    # submit's return and that freed them while the run was queued to write its output there.
    r = subprocess.run([sys.executable, "-c", CTRL_C_AFTER_SUBMIT], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "freed while queued: False" in r.stdout, r.stdout + r.stderr
    assert "closed" in r.stdout
