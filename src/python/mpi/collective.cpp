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

}  // namespace

bool PostedCollective::post(MPI_Comm comm, const Header& h, const int64_t* counts, size_t ncounts,
                            std::string* error) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const auto n = static_cast<size_t>(size);
  if (h.count < 0 || h.count > INT_MAX) {
    *error = "collective count out of range for MPI (more than 2^31-1 elements)";
    return false;
  }
  const int count = static_cast<int>(h.count);
  int status = MPI_SUCCESS;
  switch (h.aux) {
    case kAllreduce: {
      MPI_Datatype type;
      MPI_Op op;
      if (!reduction(h.dtype, h.op, &type, &op)) {
        *error = "MPI cannot reduce this dtype";
        return false;
      }
      int size_of = 0;
      MPI_Type_size(type, &size_of);
      result_.resize(static_cast<size_t>(count) * static_cast<size_t>(size_of));
      copy_back_ = ptr(h.addr);
      status = MPI_Iallreduce(ptr(h.addr), result_.data(), count, type, op, comm, &request_);
      break;
    }
    case kReduceScatter: {  // counts[size] in elements
      MPI_Datatype type;
      MPI_Op op;
      if (ncounts != n || !reduction(h.dtype, h.op, &type, &op)) {
        *error = "reduce_scatter: bad counts or dtype";
        return false;
      }
      if (!to_ints(counts, n, &ints_, error)) return false;
      status =
          MPI_Ireduce_scatter(ptr(h.addr), ptr(h.addr2), ints_.data(), type, op, comm, &request_);
      break;
    }
    case kAllgatherv: {  // counts[size], displs[size] in bytes; addr sends `count` bytes
      if (ncounts != 2 * n) {
        *error = "all_gather: bad counts";
        return false;
      }
      if (!to_ints(counts, 2 * n, &ints_, error)) return false;
      status = MPI_Iallgatherv(ptr(h.addr), count, MPI_BYTE, ptr(h.addr2), ints_.data(),
                               ints_.data() + n, MPI_BYTE, comm, &request_);
      break;
    }
    case kBcast:  // in place, `count` bytes
      status = MPI_Ibcast(ptr(h.addr), count, MPI_BYTE, static_cast<int>(h.root), comm, &request_);
      break;
    case kAlltoallv: {  // scounts, sdispls, rcounts, rdispls [size] each, in bytes
      if (ncounts != 4 * n) {
        *error = "all_to_all: bad counts";
        return false;
      }
      if (!to_ints(counts, 4 * n, &ints_, error)) return false;
      status =
          MPI_Ialltoallv(ptr(h.addr), ints_.data(), ints_.data() + n, MPI_BYTE, ptr(h.addr2),
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

void PostedCollective::finish() {
  if (copy_back_ != nullptr && !result_.empty()) {
    std::memcpy(copy_back_, result_.data(), result_.size());
  }
  copy_back_ = nullptr;
}

}  // namespace simpler::mpi
