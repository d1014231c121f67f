// The level-4 wire format: fixed-size binary headers instead of pickled tuples, so the
// progress thread of a serving rank handles data movement without entering Python.
//
// Every request is one message on the control communicator with tag kCtrlTag: a Header,
// followed by a payload (inline data, a pickled Python message, or collective counts).
// Every reply goes to the requester with the request id as tag: a ReplyHead followed by
// its payload (the bytes read, a pickled result, or an error message).
#pragma once

#include <cstdint>

namespace simpler::mpi {

inline constexpr int kCtrlTag = 11;

enum Kind : int64_t {
  kHeartbeat = 1,   // liveness only
  kPython = 2,      // payload: a pickled message for the Python layer
  kCopyTo = 3,      // data -> device [addr, addr+nbytes) of `slot`, from rank `peer`
  kCopyFrom = 4,    // device [addr, addr+nbytes) of `slot` -> rank `peer`
  kLocalCopy = 5,   // device to device within this rank: addr (slot) <- addr2 (aux slot)
  kCollective = 6,  // one MPI collective on the collective communicator (see Coll)
  kAbandon = 7,     // rank 0 gave up on its request `aux` (a peer died): no reply, and a
                    // collective or receive of it never writes device memory (freed next)
};

// How the data of kCopyTo / kCopyFrom travels.
enum Flow : int64_t {
  kSeparate = 0,  // on the data communicator with `tag` (Isend/Irecv, device memory direct)
  kInline = 1,    // inside the request (kCopyTo) or the reply (kCopyFrom)
};

enum Coll : int64_t {
  kAllreduce = 1,      // in place on addr, count elements
  kAllgatherv = 2,     // addr (count) -> addr2; payload: counts[size], displs[size]
  kReduceScatter = 3,  // addr -> addr2; payload: counts[size]
  kBcast = 4,          // in place on addr, count elements, root
  kAlltoallv = 5,      // addr -> addr2; payload: scounts, sdispls, rcounts, rdispls
};

struct Header {
  int64_t kind = 0;
  int64_t rid = 0;  // request id: the tag of the reply
  int64_t slot = 0;
  int64_t addr = 0;
  int64_t nbytes = 0;
  int64_t peer = 0;  // the other rank of a transfer
  int64_t tag = 0;   // data communicator tag of a kSeparate transfer
  int64_t flow = 0;  // Flow
  int64_t addr2 = 0;
  int64_t aux = 0;      // kLocalCopy: source slot; kCollective: Coll
  int64_t dtype = 0;    // kCollective: simpler DataType code
  int64_t op = 0;       // kCollective: 0 sum, 1 max, 2 min
  int64_t count = 0;    // kCollective: the MPI count of addr (elements or bytes, see Coll)
  int64_t root = 0;     // kCollective: broadcast root rank
  int64_t nbytes2 = 0;  // kCollective: bytes at addr2 (0: no receive buffer)
  int64_t reserved = 0;
};
static_assert(sizeof(Header) == 128);

enum ReplyStatus : int64_t {
  kOk = 0,
  kPythonError = 1,  // payload: a pickled (type, message, code, rank) description
  kNativeError = 2,  // payload: the message text; code: the status
};

struct ReplyHead {
  int64_t status = kOk;
  int64_t code = 0;
};

}  // namespace simpler::mpi
