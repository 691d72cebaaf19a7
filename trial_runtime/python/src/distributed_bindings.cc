// The trial's process group (distributed.h) and the cross-step gradient
// reducer (priority_reducer.h), for data-parallel training written in Python
// (ringtrial_ddp.DistributedModule):
//
//   group = ringtrial.ProcessGroup.connect(ctx)          # this trial's ranks
//   group.allreduce(t.numpy(), ringtrial.ReduceOp.AVERAGE)
//   group.allreduce(t.data_ptr(), t.numel(), ringtrial.DataType.FLOAT32)
//
// Buffers are contiguous CPU memory: any object with the buffer protocol
// (numpy arrays, `tensor.numpy()` views), a torch tensor itself, or a raw
// address and element count. Collectives and PriorityReducer.wait() run
// without the GIL, so other Python threads (a checkpoint upload, the other
// ranks of a test) keep running.
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ring/trial/context.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/gradient_reducer.h"
#include "ring/trial/kv_store.h"
#include "ring/trial/priority_reducer.h"

#include "bindings.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

Timeout Seconds(double s) {
  if (!(s > 0)) throw py::value_error("timeout_s must be positive, got " + std::to_string(s));
  return std::chrono::duration_cast<Timeout>(std::chrono::duration<double>(s));
}

// A contiguous CPU buffer resolved from a Python object. `view` keeps a
// buffer-protocol export alive while the collective runs.
struct Buffer {
  void* data = nullptr;
  size_t count = 0;
  DataType type = DataType::kFloat32;
  std::unique_ptr<py::buffer_info> view;
};

DataType TypeOfFormat(const py::buffer_info& info) {
  const std::string& f = info.format;
  const char kind = f.empty() ? '?' : f.back();  // "<f", "=i" and the like
  if (kind == 'f' && info.itemsize == 4) return DataType::kFloat32;
  if (kind == 'd' && info.itemsize == 8) return DataType::kFloat64;
  if ((kind == 'i' || kind == 'l' || kind == 'q') && info.itemsize == 4) return DataType::kInt32;
  if ((kind == 'i' || kind == 'l' || kind == 'q') && info.itemsize == 8) return DataType::kInt64;
  throw py::type_error("a buffer of format '" + f + "' (" + std::to_string(info.itemsize) +
                       " bytes); only float32, float64, int32 and int64 buffers can be exchanged");
}

DataType TypeOfTorch(const std::string& dtype) {
  if (dtype == "torch.float32") return DataType::kFloat32;
  if (dtype == "torch.float64") return DataType::kFloat64;
  if (dtype == "torch.int32") return DataType::kInt32;
  if (dtype == "torch.int64") return DataType::kInt64;
  throw py::type_error("a tensor of " + dtype +
                       "; only float32, float64, int32 and int64 tensors can be exchanged");
}

Buffer Resolve(const py::object& obj, bool writable, const char* what) {
  Buffer b;
  if (PyObject_CheckBuffer(obj.ptr())) {
    b.view = std::make_unique<py::buffer_info>(py::reinterpret_borrow<py::buffer>(obj).request(writable));
    const py::buffer_info& info = *b.view;
    py::ssize_t expected = info.itemsize;
    for (py::ssize_t d = info.ndim; d-- > 0;) {
      if (info.shape[d] != 1 && info.strides[d] != expected)
        throw py::value_error(std::string(what) +
                              " is not a contiguous buffer (copy it, e.g. numpy.ascontiguousarray)");
      expected *= info.shape[d];
    }
    b.data = info.ptr;
    b.count = static_cast<size_t>(info.size);
    b.type = TypeOfFormat(info);
    return b;
  }
  if (py::hasattr(obj, "data_ptr") && py::hasattr(obj, "is_contiguous") && py::hasattr(obj, "device")) {
    if (!obj.attr("is_contiguous")().cast<bool>())
      throw py::value_error(std::string(what) + " is not a contiguous tensor (call .contiguous())");
    if (py::str(obj.attr("device").attr("type")).cast<std::string>() != "cpu")
      throw py::value_error(std::string(what) + " is not a CPU tensor");
    b.data = reinterpret_cast<void*>(obj.attr("data_ptr")().cast<uintptr_t>());
    b.count = obj.attr("numel")().cast<size_t>();
    b.type = TypeOfTorch(py::str(obj.attr("dtype")));
    return b;
  }
  throw py::type_error(std::string(what) +
                       " must be a contiguous CPU buffer: a numpy array, tensor.numpy(), a torch tensor, or "
                       "(data_ptr, count, dtype)");
}

void* Address(uintptr_t data_ptr, size_t count) {
  if (data_ptr == 0 && count > 0) throw py::value_error("data_ptr is 0");
  return reinterpret_cast<void*>(data_ptr);
}

std::shared_ptr<ProcessGroup> Share(std::unique_ptr<ProcessGroup> group) {
  return std::shared_ptr<ProcessGroup>(std::move(group));
}

ProcessGroupOptions Options(const std::string& backend, double rendezvous_timeout_s,
                            const std::string& name) {
  return ProcessGroupOptions{
      .backend = backend, .rendezvous_timeout = Seconds(rendezvous_timeout_s), .name = name};
}

// PriorityReducer over memory Python owns: `owner` (the flat tensor or
// array) is kept alive as long as the reducer.
struct PyPriorityReducer {
  std::shared_ptr<ProcessGroup> group;
  py::object owner;
  std::unique_ptr<PriorityReducer> reducer;

  ~PyPriorityReducer() {
    // The destructor may wait for a piece in flight: not with the GIL held.
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release release;
      reducer.reset();
    }
  }
};

std::unique_ptr<PyPriorityReducer> MakeReducer(std::shared_ptr<ProcessGroup> group, float* data, size_t numel,
                                               std::vector<size_t> sizes, size_t piece_bytes,
                                               double timeout_s, GradientCompression compression,
                                               py::object owner) {
  auto r = std::make_unique<PyPriorityReducer>();
  r->group = group;
  r->owner = std::move(owner);
  r->reducer = std::make_unique<PriorityReducer>(
      *group, std::span<float>(data, numel), std::move(sizes),
      PriorityReducerOptions{
          .piece_bytes = piece_bytes, .timeout = Seconds(timeout_s), .compression = compression});
  return r;
}

PriorityReducer& Get(PyPriorityReducer& r) {
  if (!r.reducer) throw ReducerUsageError("gradient reducer: used after close()");
  return *r.reducer;
}

double Millis(std::chrono::nanoseconds d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

void BindDistributed(py::module_& m) {
  py::register_exception<ReducerUsageError>(m, "ReducerUsageError", m.attr("TrialError")).attr("__doc__") =
      "A gradient reducer was used wrongly (a gradient marked twice, or waited for unmarked).";

  py::enum_<DataType>(m, "DataType", "Element types of collective buffers.")
      .value("FLOAT32", DataType::kFloat32)
      .value("FLOAT64", DataType::kFloat64)
      .value("INT32", DataType::kInt32)
      .value("INT64", DataType::kInt64);
  py::enum_<ReduceOp>(m, "ReduceOp",
                      "How allreduce combines the ranks' elements (AVERAGE: floating types only).")
      .value("SUM", ReduceOp::kSum)
      .value("AVERAGE", ReduceOp::kAverage)
      .value("MIN", ReduceOp::kMin)
      .value("MAX", ReduceOp::kMax);

  py::class_<RankInfo>(m, "RankInfo",
                       "Where this process sits among the ranks (ranks on one agent share a host).")
      .def(py::init([](int rank, int world_size, int local_rank, int local_world_size, std::string agent_id,
                       std::string address) {
             return RankInfo{
                 rank, world_size, local_rank, local_world_size, std::move(agent_id), std::move(address)};
           }),
           py::arg("rank"), py::arg("world_size"), py::arg("local_rank") = 0, py::arg("local_world_size") = 1,
           py::arg("agent_id") = "", py::arg("address") = "127.0.0.1")
      .def_readwrite("rank", &RankInfo::rank)
      .def_readwrite("world_size", &RankInfo::world_size)
      .def_readwrite("local_rank", &RankInfo::local_rank)
      .def_readwrite("local_world_size", &RankInfo::local_world_size)
      .def_readwrite("agent_id", &RankInfo::agent_id)
      .def_readwrite("address", &RankInfo::address);

  m.def("memory_store", &InMemoryStore,
        "A store shared by the threads of this process (ranks run as threads, e.g. in tests).");

  const char* timeout_doc = "timeout_s: CollectiveError when the collective does not finish in time.";
  py::class_<ProcessGroup, std::shared_ptr<ProcessGroup>>(
      m, "ProcessGroup",
      "Collectives between the ranks of one trial, on contiguous CPU buffers. Every rank calls the same "
      "collectives in the same order with the same count and type; one thread at a time. A collective that "
      "fails or times out raises CollectiveError and leaves the group unusable.")
      .def(py::init([](const RankInfo& self, std::shared_ptr<KeyValueStore> store, const std::string& backend,
                       double rendezvous_timeout_s, const std::string& name) {
             const ProcessGroupOptions options = Options(backend, rendezvous_timeout_s, name);
             py::gil_scoped_release release;
             return Share(ConnectProcessGroup(self, std::move(store), options));
           }),
           py::arg("rank_info"), py::arg("store"), py::arg("backend") = "auto",
           py::arg("rendezvous_timeout_s") = 300.0, py::arg("name") = "default",
           "Rendezvous of every rank through `store` (file_store, memory_store, allocation_store), then a "
           "connected group. backend: auto | gloo | hierarchical | nccl. RendezvousError names the ranks "
           "that never arrived.")
      .def_static(
          "connect",
          [](const Context& ctx, const std::string& backend, double rendezvous_timeout_s,
             const std::string& name) {
            const ProcessGroupOptions options = Options(backend, rendezvous_timeout_s, name);
            py::gil_scoped_release release;
            return Share(ConnectProcessGroup(ctx, options));
          },
          py::arg("context"), py::arg("backend") = "auto", py::arg("rendezvous_timeout_s") = 300.0,
          py::arg("name") = "default",
          "This trial's group: its ranks from the environment, the master's store of its allocation ("
          "\"single\" for one rank and in local mode).")
      .def_property_readonly("rank", &ProcessGroup::rank)
      .def_property_readonly("size", &ProcessGroup::size)
      .def_property_readonly("backend", &ProcessGroup::backend)
      .def(
          "allreduce",
          [](ProcessGroup& g, const py::object& data, ReduceOp op, double timeout_s) {
            Buffer b = Resolve(data, true, "allreduce's data");
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.allreduce(b.data, b.count, b.type, op, timeout);
          },
          py::arg("data"), py::arg("op") = ReduceOp::kSum, py::arg("timeout_s") = 300.0,
          "Combines `data` over the ranks, in place.")
      .def(
          "allreduce",
          [](ProcessGroup& g, uintptr_t data_ptr, size_t count, DataType type, ReduceOp op,
             double timeout_s) {
            void* data = Address(data_ptr, count);
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.allreduce(data, count, type, op, timeout);
          },
          py::arg("data_ptr"), py::arg("count"), py::arg("dtype"), py::arg("op") = ReduceOp::kSum,
          py::arg("timeout_s") = 300.0, "The same on `count` elements at an address (tensor.data_ptr()).")
      .def(
          "broadcast",
          [](ProcessGroup& g, const py::object& data, int root, double timeout_s) {
            Buffer b = Resolve(data, true, "broadcast's data");
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.broadcast(b.data, b.count, b.type, root, timeout);
          },
          py::arg("data"), py::arg("root") = 0, py::arg("timeout_s") = 300.0,
          "The root's `data` to every rank, in place.")
      .def(
          "broadcast",
          [](ProcessGroup& g, uintptr_t data_ptr, size_t count, DataType type, int root, double timeout_s) {
            void* data = Address(data_ptr, count);
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.broadcast(data, count, type, root, timeout);
          },
          py::arg("data_ptr"), py::arg("count"), py::arg("dtype"), py::arg("root") = 0,
          py::arg("timeout_s") = 300.0)
      .def(
          "allgather",
          [](ProcessGroup& g, const py::object& in, const py::object& out, double timeout_s) {
            Buffer a = Resolve(in, false, "allgather's input");
            Buffer b = Resolve(out, true, "allgather's output");
            if (a.type != b.type)
              throw py::type_error("allgather's input and output have different element types");
            if (b.count != a.count * static_cast<size_t>(g.size()))
              throw py::value_error("allgather's output holds " + std::to_string(b.count) +
                                    " elements, not " + std::to_string(g.size()) + " ranks x " +
                                    std::to_string(a.count));
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.allgather(a.data, b.data, a.count, a.type, timeout);
          },
          py::arg("input"), py::arg("output"), py::arg("timeout_s") = 300.0,
          "Every rank's `input` into `output` (size x count elements), in rank order.")
      .def(
          "allgather",
          [](ProcessGroup& g, uintptr_t in_ptr, uintptr_t out_ptr, size_t count, DataType type,
             double timeout_s) {
            const void* in = Address(in_ptr, count);
            void* out = Address(out_ptr, count);
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.allgather(in, out, count, type, timeout);
          },
          py::arg("input_ptr"), py::arg("output_ptr"), py::arg("count"), py::arg("dtype"),
          py::arg("timeout_s") = 300.0)
      .def(
          "barrier",
          [](ProcessGroup& g, double timeout_s) {
            const Timeout timeout = Seconds(timeout_s);
            py::gil_scoped_release release;
            g.barrier(timeout);
          },
          py::arg("timeout_s") = 300.0, timeout_doc);

  py::class_<ReducerPiece>(m, "ReducerPiece", "Elements [offset, offset + elements) of the flat buffer.")
      .def_readonly("offset", &ReducerPiece::offset)
      .def_readonly("elements", &ReducerPiece::elements)
      .def_readonly("first", &ReducerPiece::first)
      .def_readonly("last", &ReducerPiece::last);

  py::enum_<GradientCompression>(
      m, "GradientCompression",
      "What PriorityReducer pieces travel as: NONE (float32, exact), FLOAT16 or BFLOAT16 (16 bits "
      "with error feedback: each rank keeps what rounding lost and sends it with the next gradient).")
      .value("NONE", GradientCompression::kNone)
      .value("FLOAT16", GradientCompression::kFloat16)
      .value("BFLOAT16", GradientCompression::kBFloat16);

  py::class_<PyPriorityReducer>(
      m, "PriorityReducer",
      "Averages gradients laid end to end in one float32 buffer over the group's ranks, in pieces of "
      "about piece_bytes, the first parameters' pieces first, on a background thread. mark_ready(i) "
      "when gradient i is final, wait(i) before reading its average, release(i) after. Between "
      "mark_ready and release the gradient, and the group, belong to the reducer.")
      .def(py::init([](std::shared_ptr<ProcessGroup> group, uintptr_t data_ptr, size_t numel,
                       std::vector<size_t> sizes, size_t piece_bytes, double timeout_s,
                       GradientCompression compression, py::object owner) {
             return MakeReducer(std::move(group), static_cast<float*>(Address(data_ptr, numel)), numel,
                                std::move(sizes), piece_bytes, timeout_s, compression, std::move(owner));
           }),
           py::arg("group"), py::arg("data_ptr"), py::arg("numel"), py::arg("sizes"),
           py::arg("piece_bytes") = size_t{1} << 20, py::arg("timeout_s") = 300.0,
           py::arg("compression") = GradientCompression::kNone, py::arg("owner") = py::none(),
           "Over `numel` float32 elements at data_ptr (flat.data_ptr() of a contiguous CPU tensor); "
           "sizes[i] is gradient i's element count. `owner` (the tensor) is kept alive with the "
           "reducer; otherwise the caller must keep the memory alive.")
      .def(py::init([](std::shared_ptr<ProcessGroup> group, const py::object& flat, std::vector<size_t> sizes,
                       size_t piece_bytes, double timeout_s, GradientCompression compression) {
             Buffer b = Resolve(flat, true, "the flat buffer");
             if (b.type != DataType::kFloat32) throw py::type_error("the flat buffer must hold float32");
             return MakeReducer(std::move(group), static_cast<float*>(b.data), b.count, std::move(sizes),
                                piece_bytes, timeout_s, compression, flat);
           }),
           py::arg("group"), py::arg("flat"), py::arg("sizes"), py::arg("piece_bytes") = size_t{1} << 20,
           py::arg("timeout_s") = 300.0, py::arg("compression") = GradientCompression::kNone,
           "Over a flat float32 tensor or array, kept alive with the reducer.")
      .def(
          "mark_ready", [](PyPriorityReducer& r, size_t index) { Get(r).mark_ready(index); },
          py::arg("index"))
      .def(
          "wait",
          [](PyPriorityReducer& r, size_t index) {
            PriorityReducer& reducer = Get(r);
            py::gil_scoped_release release;
            reducer.wait(index);
          },
          py::arg("index"), "Blocks (without the GIL) until gradient `index` holds its average.")
      .def(
          "release", [](PyPriorityReducer& r, size_t index) { Get(r).release(index); }, py::arg("index"))
      .def(
          "marked", [](PyPriorityReducer& r, size_t index) { return Get(r).marked(index); }, py::arg("index"))
      .def_property_readonly("pieces", [](PyPriorityReducer& r) { return Get(r).pieces(); })
      .def(
          "totals",
          [](PyPriorityReducer& r) {
            const PriorityReducerStats s = Get(r).totals();
            py::dict d;
            d["pieces"] = s.pieces;
            d["preemptions"] = s.preemptions;
            d["agree_ms"] = Millis(s.agree_time);
            d["reduce_ms"] = Millis(s.reduce_time);
            d["wait_ms"] = Millis(s.wait_time);
            return d;
          },
          "Summed over every piece so far: pieces, preemptions, agree_ms, reduce_ms (the background thread), "
          "wait_ms (blocked in wait()).")
      .def(
          "close",
          [](PyPriorityReducer& r) {
            py::gil_scoped_release release;
            r.reducer.reset();
          },
          "Stops the background thread (a piece in flight ends first).");
}

}  // namespace ring::trial::python
