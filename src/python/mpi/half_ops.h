// MPI reduction operators for float16 and bfloat16, which MPI has no predefined types or
// operators for: each element is widened to float, combined and rounded back to nearest
// even — the same numerics as the chip reduction program (host/programs/reduce_kernel.cpp),
// so a collective gives the same result whichever path (MPI or the ring) carries it.
#pragma once

#include <mpi.h>

namespace simpler::mpi {

// The six operators (float16/bfloat16 x sum/max/min), created on first use and kept for
// the life of the process (MPI_Op handles are process-wide; MPI_Finalize releases them).
// op: 0 sum, 1 max, 2 min. Returns MPI_OP_NULL for anything else.
MPI_Op half_op(bool bfloat16, int op);

}  // namespace simpler::mpi
