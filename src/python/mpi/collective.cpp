#include "collective.h"

#include <climits>
#include <cstring>

#include "half_ops.h"
#include "simpler/abi/chip_types.h"

namespace simpler::mpi {
namespace {

// Element type and operator of a reduction, or false when MPI cannot reduce the dtype.
bool reduction(int64_t dtype, int64_t op, MPI_Datatype* type, MPI_Op* mpi_op) {
  static const MPI_Op kOps[3] = {MPI_SUM, MPI_MAX, MPI_MIN};
  if (op < 0 || op > 2) return false;
  switch (dtype) {
    case CHIP_DT_FLOAT32:
      *type = MPI_FLOAT;
      *mpi_op = kOps[op];
      return true;
    case CHIP_DT_INT32:
      *type = MPI_INT32_T;
      *mpi_op = kOps[op];
      return true;
    case CHIP_DT_FLOAT16:
    case CHIP_DT_BFLOAT16:
      *type = MPI_UINT16_T;
      *mpi_op = half_op(dtype == CHIP_DT_BFLOAT16, static_cast<int>(op));
      return true;
    default:
      return false;
  }
}

bool to_ints(const int64_t* in, size_t n, std::vector<int>* out, std::string* error) {
  for (size_t i = 0; i < n; ++i) {
    if (in[i] < 0 || in[i] > INT_MAX) {
      *error = "collective count out of range for MPI (more than 2^31-1)";
      return false;
    }
    out->push_back(static_cast<int>(in[i]));
  }
  return true;
}

void* ptr(int64_t addr) { return reinterpret_cast<void*>(static_cast<uintptr_t>(addr)); }

// A host buffer of at least n bytes from `pool`, filled from `from` when given.
StagingPool::Buffer staging(StagingPool& pool, size_t n, const void* from = nullptr) {
  StagingPool::Buffer buf = pool.take(n);
  if (from != nullptr && n != 0) std::memcpy(buf.data(), from, n);
  return buf;
}

// Whether every [ints[displs + i], + ints[counts + i]) (bytes) lies within `limit` bytes.
bool within(const std::vector<int>& ints, size_t counts, size_t displs, size_t n, int64_t limit) {
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(ints[displs + i]) + ints[counts + i] > limit) return false;
  }
  return true;
}

}  // namespace

bool PostedCollective::post(MPI_Comm comm, const Header& h, const int64_t* counts, size_t ncounts,
                            std::string* error) {
  int size = 0;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const auto n = static_cast<size_t>(size);
  if (h.count < 0 || h.count > INT_MAX || h.nbytes < 0 || h.nbytes2 < 0) {
    *error = "collective count out of range for MPI (more than 2^31-1 elements)";
    return false;
  }
  const int count = static_cast<int>(h.count);
  const auto in_bytes = static_cast<size_t>(h.nbytes);
  out_size_ = static_cast<size_t>(h.nbytes2);
  copy_back_ = ptr(h.addr2);
  int status = MPI_SUCCESS;
  switch (h.aux) {
    case kAllreduce: {  // out of place: Open MPI's nonblocking in-place all-reduce is slower
      MPI_Datatype type;
      MPI_Op op;
      int size_of = 0;
      if (!reduction(h.dtype, h.op, &type, &op) || MPI_Type_size(type, &size_of) != MPI_SUCCESS ||
          static_cast<int64_t>(count) * size_of != h.nbytes) {
        *error = "all_reduce: bad count or dtype";
        return false;
      }
      out_size_ = in_bytes;
      copy_back_ = ptr(h.addr);
      in_ = staging(*pool_, in_bytes, ptr(h.addr));
      out_ = staging(*pool_, out_size_);
      status = MPI_Iallreduce(in_.data(), out_.data(), count, type, op, comm, &request_);
      break;
    }
    case kReduceScatter: {  // counts[size] in elements
      MPI_Datatype type;
      MPI_Op op;
      int size_of = 0;
      if (ncounts != n || !reduction(h.dtype, h.op, &type, &op) ||
          MPI_Type_size(type, &size_of) != MPI_SUCCESS || !to_ints(counts, n, &ints_, error)) {
        if (error->empty()) *error = "reduce_scatter: bad counts or dtype";
        return false;
      }
      int64_t total = 0;
      for (int c : ints_) total += c;
      if (total * size_of > h.nbytes || static_cast<int64_t>(ints_[rank]) * size_of > h.nbytes2) {
        *error = "reduce_scatter: counts beyond the buffers";
        return false;
      }
      in_ = staging(*pool_, in_bytes, ptr(h.addr));
      out_ = staging(*pool_, out_size_);
      status =
          MPI_Ireduce_scatter(in_.data(), out_.data(), ints_.data(), type, op, comm, &request_);
      break;
    }
    case kAllgatherv: {  // counts[size], displs[size] in bytes; addr sends `count` bytes
      if (ncounts != 2 * n) {
        *error = "all_gather: bad counts";
        return false;
      }
      if (!to_ints(counts, 2 * n, &ints_, error)) return false;
      if (count > h.nbytes || !within(ints_, 0, n, n, h.nbytes2)) {
        *error = "all_gather: counts beyond the buffers";
        return false;
      }
      in_ = staging(*pool_, static_cast<size_t>(count), ptr(h.addr));
      out_ = staging(*pool_, out_size_);
      status = MPI_Iallgatherv(in_.data(), count, MPI_BYTE, out_.data(), ints_.data(),
                               ints_.data() + n, MPI_BYTE, comm, &request_);
      break;
    }
    case kBcast:  // in place, `count` bytes
      if (count > h.nbytes) {
        *error = "broadcast: count beyond the buffer";
        return false;
      }
      out_size_ = static_cast<size_t>(count);
      copy_back_ = rank == h.root ? nullptr : ptr(h.addr);
      out_ = staging(*pool_, out_size_, ptr(h.addr));
      status = MPI_Ibcast(out_.data(), count, MPI_BYTE, static_cast<int>(h.root), comm, &request_);
      break;
    case kAlltoallv: {  // scounts, sdispls, rcounts, rdispls [size] each, in bytes
      if (ncounts != 4 * n) {
        *error = "all_to_all: bad counts";
        return false;
      }
      if (!to_ints(counts, 4 * n, &ints_, error)) return false;
      if (!within(ints_, 0, n, n, h.nbytes) || !within(ints_, 2 * n, 3 * n, n, h.nbytes2)) {
        *error = "all_to_all: counts beyond the buffers";
        return false;
      }
      in_ = staging(*pool_, in_bytes, ptr(h.addr));
      out_ = staging(*pool_, out_size_);
      status =
          MPI_Ialltoallv(in_.data(), ints_.data(), ints_.data() + n, MPI_BYTE, out_.data(),
                         ints_.data() + 2 * n, ints_.data() + 3 * n, MPI_BYTE, comm, &request_);
      break;
    }
    default:
      *error = "unknown collective";
      return false;
  }
  if (status != MPI_SUCCESS) {
    *error = "MPI refused the collective (error " + std::to_string(status) + ")";
    return false;
  }
  return true;
}

PostedCollective::~PostedCollective() {
  pool_->give(std::move(in_));
  pool_->give(std::move(out_));
}

void PostedCollective::finish() {
  if (copy_back_ != nullptr && out_size_ != 0) std::memcpy(copy_back_, out_.data(), out_size_);
  copy_back_ = nullptr;
}

}  // namespace simpler::mpi
