// Checkpoints with a Python writer:
//
//   def write(directory):
//       torch.save(state, os.path.join(directory, "state.pt"))
//   uuid = ctx.checkpoints.save(batches, write, {"epoch": 3})
//   info = ctx.checkpoints.latest_verified()   # None when starting afresh
//
// save() runs without the GIL (hashing, fsync, registering with the master)
// and takes it back only to call the writer; an exception the writer raises
// reaches the caller unchanged, with nothing registered.
#include <pybind11/stl.h>

#include <filesystem>
#include <optional>
#include <string>

#include "ring/trial/checkpoints.h"

#include "bindings.h"
#include "json_convert.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

std::string Save(Checkpoints& checkpoints, int64_t batches, const py::function& writer,
                 const py::object& metadata) {
  const nlohmann::json meta = metadata.is_none() ? nlohmann::json::object() : FromPython(metadata);
  py::gil_scoped_release release;
  // `writer` outlives this call (the caller's frame holds it), so the lambda
  // only refers to it and no reference count changes without the GIL.
  return checkpoints.save(
      batches,
      [&writer](const std::filesystem::path& dir) {
        py::gil_scoped_acquire acquire;
        writer(dir.string());
      },
      meta);
}

py::dict FileOf(const CheckpointFile& f) {
  py::dict file;
  file["path"] = f.path;
  file["size"] = f.size;
  file["sha256"] = f.sha256;
  return file;
}

}  // namespace

void BindCheckpoints(py::module_& m) {
  py::class_<CheckpointInfo>(m, "CheckpointInfo", "A registered checkpoint: where it is and what it holds.")
      .def(py::init([](std::string uuid, const std::string& path) {
             CheckpointInfo info;
             info.uuid = std::move(uuid);
             info.path = path;
             return info;
           }),
           py::arg("uuid"), py::arg("path"),
           "Names a checkpoint to restore(): restore() fetches its registration and checks its files.")
      .def_readonly("uuid", &CheckpointInfo::uuid)
      .def_property_readonly(
          "path", [](const CheckpointInfo& i) { return i.path.string(); }, "The checkpoint directory.")
      .def_readonly("batches", &CheckpointInfo::batches)
      .def_property_readonly("metadata", [](const CheckpointInfo& i) { return ToPython(i.metadata); })
      .def_property_readonly(
          "files",
          [](const CheckpointInfo& i) {
            py::list files;
            for (const auto& f : i.files) files.append(FileOf(f));
            return files;
          },
          "Each file as registered: {'path', 'size', 'sha256'}.")
      .def("__repr__", [](const CheckpointInfo& i) {
        return "<ringtrial.CheckpointInfo " + i.uuid + " batches=" + std::to_string(i.batches) + " path='" +
               i.path.string() + "'>";
      });

  py::class_<Checkpoints>(m, "Checkpoints", "The trial's checkpoints. Reach them as Context.checkpoints.")
      .def("save", &Save, py::arg("batches"), py::arg("writer"), py::arg("metadata") = py::none(),
           "Calls writer(directory) to write the checkpoint's files into a temporary directory, then "
           "records sizes and SHA-256, fsyncs, moves it into place and registers it. Returns its uuid. "
           "`metadata` is a JSON-like dict. Call on the chief only in multi-rank trials.")
      .def("latest", &Checkpoints::latest, py::call_guard<py::gil_scoped_release>(),
           "The checkpoint this run resumes from, as registered (files not checked); None when starting "
           "afresh.")
      .def("restore", &Checkpoints::restore, py::arg("info"), py::call_guard<py::gil_scoped_release>(),
           "Checks every file of the checkpoint against its registration; raises CheckpointError naming "
           "the file on a mismatch.")
      .def("latest_verified", &Checkpoints::latest_verified, py::call_guard<py::gil_scoped_release>(),
           "latest() then restore(): what a trial calls at start. None when starting afresh.")
      .def("due", &Checkpoints::due, py::arg("batches"),
           "True when min_checkpoint_period batches passed since the last save (always False without a "
           "period).");
}

}  // namespace ring::trial::python
