"""Driver demo: device memory and an asynchronous round trip on a stream.

Sets a device, creates a stream, copies a numpy array to device memory and back
asynchronously, synchronizes, and prints what it checked. Run:

    PYTHONPATH=python /usr/bin/python3 examples/driver_demo.py
"""
from __future__ import annotations

import sys

import numpy as np

from simpler import sim


def main() -> int:
    device = 0
    sim.set_device(device)
    config = sim.get_config()
    topology = sim.device_topology(device)
    print(f"driver_demo: {config.device_count} simulated devices, device {device} has "
          f"{topology.aic_cores} AIC + {topology.aiv_cores} AIV cores and "
          f"{config.device_memory_bytes >> 20} MiB")

    host_in = np.arange(1 << 16, dtype=np.float32) * 0.5
    host_out = np.zeros_like(host_in)
    free_before, _ = sim.mem_get_info()
    with sim.Stream() as stream:
        a = sim.malloc(host_in.nbytes)
        b = sim.malloc(host_in.nbytes)
        try:
            stream.memcpy_htod_async(a, host_in)                 # host -> device
            stream.memcpy_dtod_async(b, a, host_in.nbytes)       # device -> device
            stream.memcpy_dtoh_async(host_out, b)                # device -> host
            stream.synchronize()
            assert stream.query(), "stream still busy after synchronize"
        finally:
            sim.free(a)
            sim.free(b)
    free_after, _ = sim.mem_get_info()

    ok = np.array_equal(host_in, host_out) and free_after == free_before
    print(f"driver_demo: checked {host_in.nbytes} bytes host->device->device->host on stream "
          f"({'identical' if np.array_equal(host_in, host_out) else 'MISMATCH'}), device memory "
          f"{'all returned' if free_after == free_before else 'LEAKED'}: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
