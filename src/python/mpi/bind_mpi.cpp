// simpler._mpi_native: the native MPI progress engine of Worker(level=4) (see link.h).
// Built only when CMake finds MPI; simpler/host/mpi.py is its only user. Communicators are
// passed as the integer handles of mpi4py (MPI._handleof), so this module and mpi4py share
// one MPI library and one MPI_Init. Every call that talks to MPI releases the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "link.h"
#include "support/counted.h"

namespace py = pybind11;
using simpler::mpi::Call;
using simpler::mpi::Header;
using simpler::mpi::Link;
using simpler::mpi::LinkConfig;
using simpler::mpi::Message;
using simpler::mpi::Outcome;

namespace {

MPI_Comm comm_of(uintptr_t handle) {
  // Open MPI's MPI_Comm is a pointer; mpi4py's handle is that pointer as an integer.
  return reinterpret_cast<MPI_Comm>(handle);  // NOLINT(performance-no-int-to-ptr)
}

Header header_of(const std::vector<int64_t>& fields) {
  constexpr size_t kFields = sizeof(Header) / sizeof(int64_t);
  if (fields.size() > kFields) throw py::value_error("too many header fields");
  int64_t raw[kFields] = {};
  for (size_t i = 0; i < fields.size(); ++i) raw[i] = fields[i];
  Header h;
  std::memcpy(&h, raw, sizeof h);
  return h;
}

// A buffer argument (device view or host staging) as pointer and size.
struct Span {
  void* data = nullptr;
  size_t size = 0;
  py::object keep;
};

std::optional<Span> span_of(const py::object& buffer, bool writable) {
  if (buffer.is_none()) return std::nullopt;
  py::buffer b = py::reinterpret_borrow<py::buffer>(buffer);
  py::buffer_info info = b.request(writable);
  return Span{info.ptr, static_cast<size_t>(info.size * info.itemsize), buffer};
}

// What a finished call returns to Python: (outcome, status, code, payload, error).
using Result = std::tuple<int, int64_t, int64_t, py::bytes, std::string>;

Result finish(Call& call, Outcome outcome, const std::optional<Span>& inline_into) {
  std::string payload;
  if (outcome == Outcome::kDone && inline_into && call.head().status == simpler::mpi::kOk) {
    const std::string& bytes = call.payload();
    if (bytes.size() == inline_into->size) {
      std::memcpy(inline_into->data, bytes.data(), bytes.size());
    } else {
      payload = "inline reply of " + simpler::support::counted(bytes.size(), "byte") +
                ", expected " + std::to_string(inline_into->size);
      return {2, 0, 0, py::bytes(), payload};
    }
  } else {
    payload = call.payload();
  }
  return {static_cast<int>(outcome), call.head().status, call.head().code, py::bytes(payload),
          call.error};
}

// A call in flight, as Python sees it (begin() ... wait()).
class PyCall {
 public:
  PyCall(std::unique_ptr<Call> call, std::optional<Span> data, std::optional<Span> inline_into)
      : call_(std::move(call)), data_(std::move(data)), inline_into_(std::move(inline_into)) {}

  Result wait(Link& link, int64_t spin_ns) {
    Outcome outcome;
    {
      py::gil_scoped_release release;
      outcome = call_->wait(link, spin_ns);
    }
    return finish(*call_, outcome, inline_into_);
  }

  Call* call() { return call_.get(); }

  // Tells the peer to drop this request (no reply, no write into its device memory).
  void abandon(Link& link) {
    py::gil_scoped_release release;
    link.abandon_request(call_->dest(), call_->rid());
  }

 private:
  std::unique_ptr<Call> call_;
  std::optional<Span> data_;         // kept alive until the transfer completed
  std::optional<Span> inline_into_;  // where an inline reply's bytes go
};

std::unique_ptr<PyCall> begin(Link& link, int dest, const std::vector<int64_t>& fields,
                              const py::bytes& payload, const py::object& send,
                              const py::object& recv) {
  Header h = header_of(fields);
  std::optional<Span> out = span_of(send, false);
  std::optional<Span> in = span_of(recv, true);
  const bool inline_reply = h.flow == simpler::mpi::kInline;
  std::string bytes = payload;
  std::unique_ptr<Call> call;
  {
    py::gil_scoped_release release;
    call = link.begin(dest, h, bytes, out ? out->data : nullptr,
                      (in && !inline_reply) ? in->data : nullptr,
                      out ? out->size : (in ? in->size : 0));
  }
  if (inline_reply) return std::make_unique<PyCall>(std::move(call), std::move(out), std::move(in));
  return std::make_unique<PyCall>(std::move(call), out ? std::move(out) : std::move(in),
                                  std::nullopt);
}

// A collective of this rank's chip in flight (post_collective() ... wait()).
class PyCollective {
 public:
  explicit PyCollective(std::unique_ptr<simpler::mpi::PostedCollective> posted)
      : posted_(std::move(posted)) {}

  std::tuple<int, std::string> wait(Link& link, const std::vector<int>& members) {
    if (!posted_) return {static_cast<int>(Outcome::kMpiError), "already awaited"};
    std::string error;
    Outcome outcome;
    {
      py::gil_scoped_release release;
      outcome = link.wait_collective(posted_, members, &error);
    }
    posted_.reset();
    return {static_cast<int>(outcome), error};
  }

  // Not awaited (another rank's part failed): handed to the link, which keeps it off
  // device memory and frees it if it ever completes.
  void abandon(Link& link) { link.orphan(std::move(posted_)); }

 private:
  std::unique_ptr<simpler::mpi::PostedCollective> posted_;
};

}  // namespace

PYBIND11_MODULE(_mpi_native, m) {
  m.doc() = "simpler level-4 MPI progress engine (used by simpler.host.mpi)";
  m.attr("HEADER_FIELDS") = sizeof(Header) / sizeof(int64_t);

  py::class_<PyCall>(m, "Call")
      .def(
          "wait", [](PyCall& c, Link& link, int64_t spin_ns) { return c.wait(link, spin_ns); },
          py::arg("link"), py::arg("spin_ns") = 200000)
      .def("abandon", &PyCall::abandon, py::arg("link"));

  py::class_<PyCollective>(m, "Collective")
      .def("wait", &PyCollective::wait, py::arg("link"), py::arg("members"))
      .def("abandon", &PyCollective::abandon, py::arg("link"));

  py::class_<Link>(m, "Link")
      .def(py::init([](uintptr_t ctrl, uintptr_t data, uintptr_t coll, double rank_timeout,
                       double heartbeat, std::vector<int> peers) {
             LinkConfig config;
             config.ctrl = comm_of(ctrl);
             config.data = comm_of(data);
             config.coll = comm_of(coll);
             config.rank_timeout = rank_timeout;
             config.heartbeat = heartbeat;
             config.peers = std::move(peers);
             return std::make_unique<Link>(std::move(config));
           }),
           py::arg("ctrl"), py::arg("data"), py::arg("coll"), py::arg("rank_timeout"),
           py::arg("heartbeat"), py::arg("peers"))
      .def("start", &Link::start)
      .def("stop", &Link::stop, py::call_guard<py::gil_scoped_release>())
      .def("serve_devices", &Link::serve_devices)
      .def_property_readonly("rank", &Link::rank)
      .def_property_readonly("size", &Link::size)
      .def("alive", [](Link& l, int rank) { return l.liveness().alive(rank); })
      .def("silent_for", [](Link& l, int rank) { return l.liveness().silent(rank); })
      .def("reason", [](Link& l, int rank) { return l.liveness().reason(rank); })
      .def("declare_dead",
           [](Link& l, int rank, const std::string& why) { l.liveness().declare_dead(rank, why); })
      .def("go_silent", &Link::go_silent)
      .def("go_silent_at_collective", &Link::go_silent_at_collective)
      .def("refuse_next_collective", &Link::refuse_next_collective)
      .def("wait_first_failure",
           [](Link& l, const std::vector<PyCall*>& calls) {
             std::vector<Call*> raw;
             raw.reserve(calls.size());
             for (PyCall* c : calls) raw.push_back(c->call());
             py::gil_scoped_release release;
             return l.wait_first_failure(raw);
           })
      .def("new_tag", &Link::new_tag)
      .def_property_readonly("stale_replies", &Link::stale_replies)
      .def("hold_tag", &Link::hold_tag)
      .def("next_message",
           [](Link& l, double timeout) -> py::object {
             Message m;
             bool got;
             {
               py::gil_scoped_release release;
               got = l.next_message(timeout, &m);
             }
             if (!got) return py::none();
             return py::make_tuple(m.source, m.head.kind, m.head.rid, py::bytes(m.payload));
           })
      .def("begin", &begin, py::arg("dest"), py::arg("header"), py::arg("payload"),
           py::arg("send") = py::none(), py::arg("recv") = py::none())
      .def(
          "call",
          [](Link& l, int dest, const std::vector<int64_t>& fields, const py::bytes& payload,
             const py::object& send, const py::object& recv, int64_t spin_ns) {
            return begin(l, dest, fields, payload, send, recv)->wait(l, spin_ns);
          },
          py::arg("dest"), py::arg("header"), py::arg("payload"), py::arg("send") = py::none(),
          py::arg("recv") = py::none(), py::arg("spin_ns") = 200000)
      .def("transfer",
           // The hot path of rank 0: one transfer whose local end is device memory of this
           // rank's chip `local_slot` (checked here), all arguments plain ints. Returns None
           // on success, else the (outcome, status, code, payload, error) of call().
           [](Link& l, int dest, int64_t kind, int64_t slot, int64_t addr, int64_t nbytes,
              int64_t peer, int64_t tag, int64_t flow, int64_t local_slot,
              int64_t local_addr) -> py::object {
             std::string error;
             if (!l.direct() || !l.device_range(local_slot, local_addr, nbytes, &error))
               throw py::value_error(error.empty() ? "no addressable device memory" : error);
             Header h;
             h.kind = kind;
             h.slot = slot;
             h.addr = addr;
             h.nbytes = nbytes;
             h.peer = peer;
             h.tag = tag;
             h.flow = flow;
             auto* local = reinterpret_cast<char*>(static_cast<uintptr_t>(local_addr));  // NOLINT
             const auto n = static_cast<size_t>(nbytes);
             const bool inline_flow = flow == simpler::mpi::kInline;
             std::unique_ptr<Call> call;
             Outcome outcome;
             {
               py::gil_scoped_release release;
               std::string payload;
               if (kind == simpler::mpi::kCopyTo && inline_flow) payload.assign(local, n);
               call =
                   l.begin(dest, h, payload,
                           (kind == simpler::mpi::kCopyTo && !inline_flow) ? local : nullptr,
                           (kind == simpler::mpi::kCopyFrom && !inline_flow) ? local : nullptr, n);
               outcome = call->wait(l, 200000);
               if (outcome == Outcome::kDone && call->head().status == simpler::mpi::kOk &&
                   kind == simpler::mpi::kCopyFrom && inline_flow) {
                 if (call->payload().size() != n) {
                   outcome = Outcome::kMpiError;
                   call->error = "inline reply of the wrong size";
                 } else {
                   std::memcpy(local, call->payload().data(), n);
                 }
               }
             }
             if (outcome == Outcome::kDone && call->head().status == simpler::mpi::kOk)
               return py::none();
             return py::make_tuple(static_cast<int>(outcome), call->head().status,
                                   call->head().code, py::bytes(call->payload()), call->error);
           })
      .def("post",
           [](Link& l, int dest, const py::bytes& payload) {
             Header h;
             h.kind = simpler::mpi::kPython;
             std::string bytes = payload;
             py::gil_scoped_release release;
             return l.post(dest, h, bytes);
           })
      .def("reply",
           [](Link& l, int dest, int64_t rid, int64_t status, int64_t code,
              const py::bytes& payload) {
             std::string bytes = payload;
             py::gil_scoped_release release;
             l.reply(dest, rid, simpler::mpi::ReplyHead{status, code}, bytes);
           })
      .def("post_collective",
           [](Link& l, const std::vector<int64_t>& fields, const std::vector<int64_t>& counts) {
             Header h = header_of(fields);
             std::string error;
             std::unique_ptr<simpler::mpi::PostedCollective> posted;
             {
               py::gil_scoped_release release;
               posted = l.post_collective(h, counts.data(), counts.size(), &error);
             }
             if (!posted) throw py::value_error(error);
             return std::make_unique<PyCollective>(std::move(posted));
           });
}
