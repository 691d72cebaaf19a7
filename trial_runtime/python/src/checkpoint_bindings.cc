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
//
// save_async() does not stall training: the caller hands over the files'
// bytes (bytes, bytearray, memoryview: anything with the buffer protocol),
// which are held, not copied, until a background thread has written them
// without the GIL; the caller must not change them meanwhile.
//
//   buffer = io.BytesIO(); torch.save(model.state_dict(), buffer)
//   ctx.checkpoints.save_async(batches, {"state.pt": buffer.getbuffer()})
//   uuid = ctx.checkpoints.wait()   # optional: the next save waits anyway
//
// save_forked() copies nothing: a fork()ed writer process writes the
// buffers from its copy-on-write view of memory, so the caller may change
// them as soon as it returns.
//
// ShardedCheckpoints(ctx): every rank writes its part of one checkpoint.
#include <pybind11/stl.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ring/trial/checkpoints.h"
#include "ring/trial/checkpoints_sharded.h"
#include "ring/trial/context.h"

#include "bindings.h"
#include "json_convert.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

// One file's bytes, held through the buffer protocol; released with the
// GIL held (only the wrappers below create and drop them).
class HeldBuffer {
 public:
  explicit HeldBuffer(const py::handle& object) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  const char* data() const { return static_cast<const char*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

// The buffers of each Checkpoints' write in flight, kept until it is known
// to be finished (under the GIL).
std::map<const Checkpoints*, std::vector<std::unique_ptr<HeldBuffer>>>& HeldFor() {
  static auto* held = new std::map<const Checkpoints*, std::vector<std::unique_ptr<HeldBuffer>>>();
  return *held;
}

std::optional<std::string> Wait(Checkpoints& checkpoints) {
  std::optional<std::string> uuid;
  {
    py::gil_scoped_release release;
    try {
      uuid = checkpoints.wait();
    } catch (...) {
      py::gil_scoped_acquire acquire;
      HeldFor().erase(&checkpoints);
      throw;
    }
  }
  HeldFor().erase(&checkpoints);
  return uuid;
}

using Parts = std::vector<std::pair<std::string, std::pair<const char*, size_t>>>;

// Writes each buffer to its file while a second thread hashes the same
// bytes in memory, and asks the kernel to start each chunk's writeback as
// soon as it is written: the disk, the hashing and the copy into the page
// cache overlap. Returns the files with their digests.
Checkpoints::HashingWriter WriterOf(Parts parts) {
  return [parts = std::move(parts)](const std::filesystem::path& dir) {
    std::vector<std::string> digests(parts.size());
    std::thread hasher([&] {
      for (size_t i = 0; i < parts.size(); ++i)
        digests[i] = Sha256Bytes(parts[i].second.first, parts[i].second.second);
    });
    std::vector<CheckpointFile> files;
    std::exception_ptr failed;
    try {
      for (const auto& [path, bytes] : parts) {
        const auto file = dir / path;
        std::filesystem::create_directories(file.parent_path());
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) throw CheckpointError("cannot write " + file.string() + ": " + std::strerror(errno));
        constexpr size_t kChunk = 16 << 20;
        size_t done = 0;
        while (done < bytes.second) {
          const ssize_t n = ::write(fd, bytes.first + done, std::min(kChunk, bytes.second - done));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            throw CheckpointError("cannot write " + file.string() + ": " + why);
          }
          ::sync_file_range(fd, static_cast<off_t>(done), n, SYNC_FILE_RANGE_WRITE);
          done += static_cast<size_t>(n);
        }
        ::close(fd);
        files.push_back({path, bytes.second, ""});
      }
    } catch (...) {
      failed = std::current_exception();
    }
    hasher.join();
    if (failed) std::rethrow_exception(failed);
    for (size_t i = 0; i < files.size(); ++i) files[i].sha256 = digests[i];
    return files;
  };
}

// Holds the buffers of `files` ({relative path: bytes-like}) and lists
// them: the GIL is held.
Parts HoldParts(const py::dict& files, std::vector<std::unique_ptr<HeldBuffer>>& held) {
  Parts parts;
  for (const auto& [name, data] : files) {
    const auto path = name.cast<std::string>();
    const std::filesystem::path rel(path);
    if (path.empty() || rel.is_absolute() || path.find("..") != std::string::npos)
      throw CheckpointError("a checkpoint file name must be a relative path inside it, got \"" + path + "\"");
    held.push_back(std::make_unique<HeldBuffer>(data));
    parts.emplace_back(path, std::make_pair(held.back()->data(), held.back()->size()));
  }
  return parts;
}

nlohmann::json MetadataOf(const py::object& metadata) {
  return metadata.is_none() ? nlohmann::json::object() : FromPython(metadata);
}

void SaveAsync(Checkpoints& checkpoints, int64_t batches, const py::dict& files, const py::object& metadata) {
  const nlohmann::json meta = MetadataOf(metadata);
  Wait(checkpoints);  // at most one in flight; its buffers are let go here
  std::vector<std::unique_ptr<HeldBuffer>> held;
  Parts parts = HoldParts(files, held);
  HeldFor()[&checkpoints] = std::move(held);
  py::gil_scoped_release release;
  checkpoints.save_async_hashed(
      batches, [&parts] { return WriterOf(parts); }, meta);
}

// The buffers are needed only until the fork: the writer has its own view.
void SaveForked(Checkpoints& checkpoints, int64_t batches, const py::dict& files,
                const py::object& metadata) {
  const nlohmann::json meta = MetadataOf(metadata);
  Wait(checkpoints);
  std::vector<std::unique_ptr<HeldBuffer>> held;
  const Parts parts = HoldParts(files, held);
  std::vector<Checkpoints::Bytes> bytes;
  for (const auto& [path, data] : parts) bytes.push_back({path, data.first, data.second});
  py::gil_scoped_release release;
  checkpoints.save_forked(batches, bytes, meta);
}

std::string Save(Checkpoints& checkpoints, int64_t batches, const py::function& writer,
                 const py::object& metadata) {
  const nlohmann::json meta = metadata.is_none() ? nlohmann::json::object() : FromPython(metadata);
  Wait(checkpoints);  // a checkpoint of save_async first, and its buffers let go
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

void SaveAsyncSharded(ShardedCheckpoints& sharded, int64_t batches, const py::dict& files,
                      const py::object& metadata) {
  const nlohmann::json meta = MetadataOf(metadata);
  Wait(sharded.checkpoints());
  std::vector<std::unique_ptr<HeldBuffer>> held;
  Parts parts = HoldParts(files, held);
  HeldFor()[&sharded.checkpoints()] = std::move(held);
  py::gil_scoped_release release;
  sharded.save_async_hashed(
      batches, [&parts] { return WriterOf(parts); }, meta);
}

std::string SaveSharded(ShardedCheckpoints& sharded, int64_t batches, const py::function& writer,
                        const py::object& metadata) {
  const nlohmann::json meta = MetadataOf(metadata);
  Wait(sharded.checkpoints());
  py::gil_scoped_release release;
  return sharded.save(
      batches,
      [&writer](const std::filesystem::path& dir) {
        py::gil_scoped_acquire acquire;
        writer(dir.string());
      },
      meta);
}

std::unique_ptr<ShardedCheckpoints> MakeSharded(Context& ctx, double timeout_s, const std::string& name,
                                                std::shared_ptr<KeyValueStore> store) {
  if (!(timeout_s > 0)) throw ConfigError("ShardedCheckpoints: timeout_s must be positive");
  ShardOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  options.name = name;
  if (!store) return std::make_unique<ShardedCheckpoints>(ctx, options);
  return std::make_unique<ShardedCheckpoints>(ctx.checkpoints(), ctx.rank(), ctx.world_size(),
                                              std::move(store), options);
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
      .def("save_async", &SaveAsync, py::arg("batches"), py::arg("files"), py::arg("metadata") = py::none(),
           "Writes a checkpoint of `files` ({relative path: bytes-like}) in the background: returns at once "
           "and lets training go on while the files are written, checksummed, made durable and registered "
           "exactly as save() does. The buffers are held, not copied: do not change them until wait() "
           "returns. At most one is in flight (a second call waits for the first); an error of the write "
           "is raised by the next save_async, save or wait.")
      .def("save_forked", &SaveForked, py::arg("batches"), py::arg("files"), py::arg("metadata") = py::none(),
           "A checkpoint of `files` ({relative path: bytes-like}) that copies nothing here: fork()s a writer "
           "process that writes and hashes the buffers from its copy-on-write view of memory, and returns. "
           "The buffers may change at once (the kernel copies a page written meanwhile). A background "
           "thread reaps the writer, then commits and registers the checkpoint as save() does; a writer "
           "that fails or is killed leaves the previous checkpoint the latest and its error is raised by "
           "the next save_async, save_forked, save or wait. At most one is in flight.")
      .def("wait", &Wait,
           "Waits for the checkpoint save_async is writing: its uuid, or None when none is in flight. "
           "Raises what its write raised. preempt.acknowledge() waits for it too.")
      .def("pending", &Checkpoints::pending, "True while a checkpoint of save_async is being written.")
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

  py::class_<ShardedCheckpoints>(
      m, "ShardedCheckpoints",
      "Checkpoints in parts: every rank writes its own part (rank-<r>/) of one checkpoint, registered once "
      "every part is durable. Every rank calls the same saves in the same order.")
      .def(py::init(&MakeSharded), py::arg("context"), py::arg("timeout_s") = 600.0,
           py::arg("name") = "default", py::arg("store") = nullptr, py::keep_alive<1, 2>(),
           "The ranks of `context`, meeting through the allocation's store (or `store`, e.g. "
           "ringtrial.file_store(dir)); each save waits at most timeout_s for the other ranks.")
      .def_property_readonly("rank", &ShardedCheckpoints::rank)
      .def_property_readonly("world_size", &ShardedCheckpoints::world_size)
      .def("save", &SaveSharded, py::arg("batches"), py::arg("writer"), py::arg("metadata") = py::none(),
           "Calls writer(directory) with this rank's part folder; returns the checkpoint's uuid on every "
           "rank once rank 0 registered it. Rank 0's metadata is the checkpoint's.")
      .def("save_async", &SaveAsyncSharded, py::arg("batches"), py::arg("files"),
           py::arg("metadata") = py::none(),
           "This rank's part ({relative path: bytes-like}, held, not copied) written in the background as "
           "Checkpoints.save_async; wait() returns the uuid once registered.")
      .def(
          "wait", [](ShardedCheckpoints& s) { return Wait(s.checkpoints()); },
          "Waits for the checkpoint in flight: its uuid, None when none was.")
      .def(
          "pending", [](ShardedCheckpoints& s) { return s.checkpoints().pending(); },
          "True while a checkpoint is being written.")
      .def("restore", &ShardedCheckpoints::restore, py::arg("info"), py::call_guard<py::gil_scoped_release>(),
           "This rank's part of the checkpoint, verified: path is the part's folder. Raises CheckpointError "
           "when the checkpoint is not sharded or has another number of parts.")
      .def("latest_verified", &ShardedCheckpoints::latest_verified, py::call_guard<py::gil_scoped_release>(),
           "This rank's part of the checkpoint this run resumes from, verified; None when starting afresh.");
  m.def("shard_count", &ShardCount, py::arg("info"),
        "The number of parts of a sharded checkpoint; 0 when it is not sharded.");
  m.def(
      "shard_path", [](const CheckpointInfo& info, int rank) { return ShardPath(info, rank).string(); },
      py::arg("info"), py::arg("rank"), "The folder of `rank`'s part of a sharded checkpoint.");
}

}  // namespace ring::trial::python
