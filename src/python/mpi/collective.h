// One collective of a simpler orchestration carried by MPI's own nonblocking collective
// (MPI_Iallreduce, MPI_Iallgatherv, MPI_Ireduce_scatter, MPI_Ibcast, MPI_Ialltoallv) on the
// device buffers themselves (device memory is host memory on the simulator, as with a
// device-aware MPI on hardware). Every member rank posts the same collective in the same
// order; rank 0 guarantees the order (simpler/host/mpi.py launches each collective to all
// members under one lock).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "wire.h"

namespace simpler::mpi {

class PostedCollective {
 public:
  // Posts h (kind kCollective) on comm; `counts` is the payload of int64 counts (bytes or
  // elements, see Coll). Returns false with `error` set when the arguments are invalid.
  bool post(MPI_Comm comm, const Header& h, const int64_t* counts, size_t ncounts,
            std::string* error);
  MPI_Request& request() { return request_; }
  // After completion: moves the result where it belongs (an all-reduce runs out of place
  // into a host buffer — Open MPI's nonblocking in-place all-reduce is markedly slower —
  // and is copied back into the device buffer here).
  void finish();

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<int> ints_;  // the count/displacement arrays MPI reads until completion
  std::vector<char> result_;
  void* copy_back_ = nullptr;
};

}  // namespace simpler::mpi
