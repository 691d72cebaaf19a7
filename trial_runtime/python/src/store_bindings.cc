// The allocation's key-value store (kv_store.h), for collectives written in
// Python (the `determined` package's DistributedContext):
//
//   store = ringtrial.allocation_store(ctx)     # the master's store in a cluster
//   store.set("k", b"v"); store.get("k", timeout_s=60.0) == b"v"
//
// get() waits for the key (a long poll on the master's store) without the GIL.
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ring/trial/context.h"
#include "ring/trial/kv_store.h"

#include "bindings.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

void Set(KeyValueStore& store, const std::string& key, const py::bytes& value) {
  const std::string data = value;  // copied with the GIL held
  KeyValueStore::Bytes bytes(data.begin(), data.end());
  py::gil_scoped_release release;
  store.set(key, bytes);
}

py::bytes Get(KeyValueStore& store, const std::string& key, double timeout_s) {
  KeyValueStore::Bytes bytes;
  {
    py::gil_scoped_release release;
    bytes = store.get(key, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  }
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

void BindStore(py::module_& m) {
  py::class_<KeyValueStore, std::shared_ptr<KeyValueStore>>(
      m, "KeyValueStore",
      "A key-value store ranks rendezvous through. Keys are ASCII [A-Za-z0-9._:/-], at most 256 bytes; "
      "values bytes of at most 4 MiB; setting a key again replaces its value.")
      .def("set", &Set, py::arg("key"), py::arg("value"))
      .def("get", &Get, py::arg("key"), py::arg("timeout_s") = 300.0,
           "The key's value, waiting up to timeout_s for it to be set; RendezvousError on timeout.")
      .def("check", &KeyValueStore::check, py::arg("keys"), py::call_guard<py::gil_scoped_release>(),
           "Whether every key is set now, without waiting.");
  m.def("allocation_store", &AllocationStore, py::arg("context"), py::keep_alive<0, 1>(),
        "The master's store of the context's allocation (cluster mode); an in-memory one in local mode.");
  m.def("file_store", &FileStore, py::arg("directory"),
        "A store shared by the processes that see `directory` (one host or a shared file system).");
}

}  // namespace ring::trial::python
