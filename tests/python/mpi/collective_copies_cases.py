"""The native MPI collective (src/python/mpi/collective.h) in a one-rank MPI world: it works on
host copies of the buffers — the result reaches the output only through finish() — and
counts that would read or write past the buffers are refused before MPI sees them.

Run in its own process by tests/python/test_mpi_collective_copies.py: MPI initialized in the
test process would stay initialized for every later test (some fork, some start mpirun)."""
from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("mpi4py")
native = pytest.importorskip("simpler._mpi_native")

from mpi4py import MPI  # noqa: E402

from simpler.host import mpi_collectives as mc  # noqa: E402
from simpler.task_interface import DataType  # noqa: E402


@pytest.fixture(scope="module")
def link():
    comms = [MPI.COMM_SELF.Dup() for _ in range(3)]
    yield native.Link(*(MPI._handleof(c) for c in comms), 10.0, 0.25, [])
    for c in comms:
        c.Free()


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_the_result_is_copied_into_the_output_on_completion(link):
    src = np.arange(16, dtype=np.uint8)
    out = np.zeros(16, dtype=np.uint8)
    header = mc._header(mc.ALLGATHERV, 0, _addr(src), 16, _addr(out), 16, count=16)
    posted = link.post_collective(header, [16, 0])
    src[:] = 99                                   # the input was copied when posted
    assert posted.wait(link, []) == (0, "")
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.uint8))


def test_an_all_reduce_copies_back_in_place(link):
    x = np.arange(8, dtype=np.float32)
    header = mc._header(mc.ALLREDUCE, 0, _addr(x), 32, dtype=int(DataType.FLOAT32), count=8)
    assert link.post_collective(header, []).wait(link, []) == (0, "")
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32))


@pytest.mark.parametrize("coll, counts, fields, match", [
    (mc.ALLGATHERV, [17, 0], dict(count=16), "beyond the buffers"),          # writes past out
    (mc.ALLGATHERV, [16, 0], dict(count=17), "beyond the buffers"),          # reads past src
    (mc.ALLTOALLV, [17, 0, 16, 0], {}, "beyond the buffers"),
    (mc.REDUCE_SCATTER, [5], dict(dtype=int(DataType.FLOAT32)), "beyond the buffers"),
    (mc.BCAST, [], dict(count=17), "beyond the buffer"),
    (mc.ALLREDUCE, [], dict(dtype=int(DataType.FLOAT32), count=5), "bad count"),
])
def test_counts_beyond_the_buffers_are_refused(link, coll, counts, fields, match):
    src = np.zeros(16, dtype=np.uint8)
    out = np.zeros(16, dtype=np.uint8)
    header = mc._header(coll, 0, _addr(src), 16, _addr(out), 16, **fields)
    with pytest.raises(ValueError, match=match):
        link.post_collective(header, counts)
    assert not out.any()


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_an_abandoned_collective_gives_its_host_copies_back(link):
    """A collective that may never complete keeps its address range, not its memory."""
    x = np.ones(8 << 20, dtype=np.float32)              # 32 MiB, touched
    header = mc._header(mc.ALLREDUCE, 0, _addr(x), x.nbytes, dtype=int(DataType.FLOAT32),
                        count=x.size)
    before = _resident_bytes()
    posted = link.post_collective(header, [])
    assert _resident_bytes() - before >= x.nbytes * 3 // 4   # the input's copy
    posted.abandon(link)
    assert _resident_bytes() - before < x.nbytes // 4


def test_a_reply_given_up_on_is_never_matched_by_a_later_request():
    """Request ids wrap (every 30,000): a reply that arrives after the caller gave up is
    consumed, and its id is not drawn again until it is (the later request would otherwise
    get the stale reply)."""
    comms = [MPI.COMM_SELF.Dup() for _ in range(3)]
    link = native.Link(*(MPI._handleof(c) for c in comms), 10.0, 0.05, [])
    link.start()
    try:
        call = link.begin(0, [2], b"first")              # kPython, to this rank itself
        rid = link.next_message(5.0)[2]
        del call                                          # given up on, unawaited
        link.reply(0, rid, 0, 0, b"stale")                # ... and answered after all
        for _ in range(30000 - 1):                        # the ids come round to rid
            link.new_tag()
        call = link.begin(0, [2], b"second")
        link.reply(0, link.next_message(5.0)[2], 0, 0, b"fresh")
        assert call.wait(link)[3] == b"fresh"
        deadline = time.monotonic() + 10
        while link.stale_replies and time.monotonic() < deadline:
            time.sleep(0.01)
        assert link.stale_replies == 0                    # consumed by the progress thread
    finally:
        link.stop()
        for c in comms:
            c.Free()


def test_replies_given_up_on_are_remembered_within_a_bound():
    """At most 1,024 ids wait for a stale reply (the oldest forgotten past that), so ids
    never run out: a new id is still drawn at once."""
    comms = [MPI.COMM_SELF.Dup() for _ in range(3)]
    link = native.Link(*(MPI._handleof(c) for c in comms), 10.0, 0.05, [])
    try:
        for _ in range(1100):                             # never answered, given up on
            link.begin(0, [2], b"x")
        assert link.stale_replies == 1024
        start = time.monotonic()
        tags = {link.new_tag() for _ in range(30000)}
        assert len(tags) == 30000 - 1024 and time.monotonic() - start < 10
    finally:
        link.stop()
        for c in comms:
            c.Free()


def test_a_transfer_given_up_on_never_lends_its_tag_to_a_later_one():
    """A send whose receiver refused (or a receive dropped) may leave its data unmatched at
    the receiver, even when the send completed here (eagerly): its tag is never drawn
    again, or a later transfer with it would receive the old data."""
    comms = [MPI.COMM_SELF.Dup() for _ in range(3)]
    link = native.Link(*(MPI._handleof(c) for c in comms), 10.0, 0.05, [])
    try:
        tag = link.new_tag()
        data = np.arange(16, dtype=np.uint8)
        # kCopyTo of 16 bytes to this rank, separate flow: the data is sent at once, and
        # nobody receives it (the request is never served here, as if refused)
        call = link.begin(0, [3, 0, 0, 0, 16, 0, tag, 0], b"", send=data)
        del call                                          # given up on
        assert tag not in {link.new_tag() for _ in range(30000)}
    finally:
        link.stop()
        for c in comms:
            c.Free()
