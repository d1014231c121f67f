// One collective of a simpler orchestration carried by MPI's own nonblocking collective
// (MPI_Iallreduce, MPI_Iallgatherv, MPI_Ireduce_scatter, MPI_Ibcast, MPI_Ialltoallv) on
// copies of the device buffers (device memory is host memory on the simulator; see the
// class comment for why copies). Every member rank posts the same collective in the same
// order; rank 0 guarantees the order (simpler/host/mpi.py launches each collective to all
// members under one lock).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "staging_pool.h"
#include "wire.h"

namespace simpler::mpi {

// MPI only ever touches the collective's own host buffers: the inputs are copied out of
// device memory when it is posted and the result copied in when it completed. A collective
// abandoned because a member rank went silent can be neither cancelled nor freed, and may
// still complete if that rank resumes: by then the device buffers may be freed and reused
// (the run's failure path frees them), so it must not write them — abandon() makes
// finish() a no-op, and the buffers here stay alive as long as this object (its owner
// keeps it until MPI completes it).
class PostedCollective {
 public:
  explicit PostedCollective(std::shared_ptr<StagingPool> pool) : pool_(std::move(pool)) {}
  ~PostedCollective();
  PostedCollective(const PostedCollective&) = delete;
  PostedCollective& operator=(const PostedCollective&) = delete;
  // Posts h (kind kCollective) on comm; `counts` is the payload of int64 counts (bytes or
  // elements, see Coll), each checked against h's buffer sizes. Returns false with `error`
  // set when the arguments are invalid.
  bool post(MPI_Comm comm, const Header& h, const int64_t* counts, size_t ncounts,
            std::string* error);
  MPI_Request& request() { return request_; }
  // After completion: copies the result into device memory, unless abandoned.
  void finish();
  // From now on the device buffers may be freed: a later completion leaves them alone.
  // The host copies' pages go back to the system at once (they stay mapped, since MPI may
  // still read or write them): a collective that never completes keeps no memory, only
  // its address range, until the process exits.
  void abandon() {
    copy_back_ = nullptr;
    in_.release_pages();
    out_.release_pages();
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<int> ints_;  // the count/displacement arrays MPI reads until completion
  std::shared_ptr<StagingPool> pool_;
  StagingPool::Buffer in_;   // a copy of the device input
  StagingPool::Buffer out_;  // the result, copied to copy_back_ by finish()
  size_t out_size_ = 0;
  void* copy_back_ = nullptr;
};

}  // namespace simpler::mpi
