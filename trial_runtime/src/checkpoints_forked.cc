// Checkpoints::save_forked: a copy-on-write snapshot taken by fork(). The
// child (the writer) sees the parent's memory as it was at the fork; it
// writes the files with plain system calls while its own child (the
// hasher) hashes the same bytes, and both report on a pipe, then exit. The parent's background thread reads
// the reports, reaps the writer and commits and registers the checkpoint
// (Checkpoints::Finish), so nothing after the fork needs the child to take a
// lock another thread of the parent may have held when it forked.
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ring/trial/checkpoints.h"

namespace ring::trial {
namespace fs = std::filesystem;
namespace {

// A report on the pipe: each file gets one from the writer (written) and
// one from the hasher (its digest).
struct FileReport {
  int32_t from = 0;   // a Reporter
  int32_t index = 0;  // the file's, in the plan
  int32_t error = 0;  // errno of the step that failed; 0 when it went well
  int32_t step = 0;   // a WriterStep
  unsigned char digest[32] = {};
};

enum class Reporter : int32_t { kWriter = 1, kHasher = 2 };
enum class WriterStep : int32_t { kOpen = 1, kWrite = 2, kClose = 3, kHash = 4 };

const char* StepName(int32_t step) {
  switch (static_cast<WriterStep>(step)) {
    case WriterStep::kOpen:
      return "open";
    case WriterStep::kWrite:
      return "write";
    case WriterStep::kClose:
      return "close";
    case WriterStep::kHash:
      return "hash";
  }
  return "?";
}

// One file as the writer writes it. Everything is prepared before the fork:
// the path, the bytes' address and an initialised digest context.
struct PlannedFile {
  std::string relative;
  std::string absolute;
  const char* data = nullptr;
  size_t size = 0;
  EVP_MD_CTX* sha = nullptr;
};

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void Fail(int report_fd, Reporter from, size_t index, WriterStep step) {
  FileReport report;
  report.from = static_cast<int32_t>(from);
  report.index = static_cast<int32_t>(index);
  report.error = errno != 0 ? errno : EIO;
  report.step = static_cast<int32_t>(step);
  WriteAll(report_fd, &report, sizeof report);
  ::_exit(3);
}

constexpr size_t kChunk = 16 << 20;

// Hashes every file's bytes and reports each digest: the hasher process,
// or the writer itself when it could not start one.
void HashAll(const std::vector<PlannedFile>& files, int report_fd) {
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    FileReport report;
    report.from = static_cast<int32_t>(Reporter::kHasher);
    report.index = static_cast<int32_t>(i);
    for (size_t done = 0; done < f.size; done += kChunk)
      if (EVP_DigestUpdate(f.sha, f.data + done, std::min(kChunk, f.size - done)) != 1)
        Fail(report_fd, Reporter::kHasher, i, WriterStep::kHash);
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(f.sha, report.digest, &len) != 1 || len != sizeof report.digest)
      Fail(report_fd, Reporter::kHasher, i, WriterStep::kHash);
    if (!WriteAll(report_fd, &report, sizeof report)) ::_exit(4);
  }
}

// The child of the fork, and its own child, the hasher: the writer writes
// the files while the hasher hashes the same bytes, on another core. Only
// system calls and the digests' updates (plain computation on contexts
// made before the fork): no allocation, no locks, no C++ library state, no
// libtorch, no Python. Both end with _exit.
[[noreturn]] void RunWriter(const std::vector<PlannedFile>& files, int report_fd, pid_t parent) {
  sigset_t all;
  ::sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);  // the parent's handlers are not for this process
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(2);  // the parent died before the line above
  // The parent's sockets and pipes stay the parent's: a connection it
  // closes must not stay open here (peers would not see it close).
  if (report_fd > 0) ::syscall(SYS_close_range, 0u, static_cast<unsigned>(report_fd - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(report_fd + 1), ~0u, 0u);
  // The raw system call: fork() would run the libraries' atfork handlers
  // again, on locks this copy of the trial may hold from its other threads.
  const pid_t writer = static_cast<pid_t>(::syscall(SYS_getpid));
  const pid_t hasher = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (hasher == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the writer
    if (::getppid() != writer) ::_exit(2);
    HashAll(files, report_fd);
    ::_exit(0);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    const int fd = ::open(f.absolute.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) Fail(report_fd, Reporter::kWriter, i, WriterStep::kOpen);
    size_t done = 0;
    while (done < f.size) {
      const ssize_t n = ::write(fd, f.data + done, std::min(kChunk, f.size - done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Fail(report_fd, Reporter::kWriter, i, WriterStep::kWrite);
      // The disk writes this chunk back while the next one is copied.
      ::sync_file_range(fd, static_cast<off_t>(done), n, SYNC_FILE_RANGE_WRITE);
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) Fail(report_fd, Reporter::kWriter, i, WriterStep::kClose);
    FileReport report;
    report.from = static_cast<int32_t>(Reporter::kWriter);
    report.index = static_cast<int32_t>(i);
    if (!WriteAll(report_fd, &report, sizeof report)) ::_exit(4);
  }
  if (hasher < 0) {
    HashAll(files, report_fd);  // no second process: hashed here, after writing
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(hasher, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 5);
}

std::string Hex(const unsigned char* digest, size_t len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) +
           ")";
  return "ended with wait status " + std::to_string(status);
}

// The writer process and what the parent keeps of it; owned by the
// background thread once the fork is done.
class ForkedWriter {
 public:
  ForkedWriter(std::vector<PlannedFile> files) : files_(std::move(files)) {}
  ForkedWriter(const ForkedWriter&) = delete;
  ForkedWriter& operator=(const ForkedWriter&) = delete;
  ~ForkedWriter() {
    if (pid_ > 0) {  // never collected: the checkpoint is abandoned
      ::kill(pid_, SIGKILL);
      Reap();
    }
    CloseReports();
    for (auto& f : files_) EVP_MD_CTX_free(f.sha);
  }

  std::vector<PlannedFile>& files() { return files_; }

  // Forks the writer; throws CheckpointError when it cannot.
  void Start() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw CheckpointError(std::string("cannot make the checkpoint writer's pipe: ") + std::strerror(errno));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      RunWriter(files_, fds[1], parent);
    }
    const int fork_errno = errno;
    ::close(fds[1]);
    reports_ = fds[0];
    if (pid < 0)
      throw CheckpointError(std::string("cannot fork the checkpoint writer: ") + std::strerror(fork_errno));
    pid_ = pid;
    exited_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // -1 before Linux 5.3
  }

  // Waits for the writer: every file with its size and SHA-256, or a
  // CheckpointError saying what went wrong.
  std::vector<CheckpointFile> Collect() {
    const size_t n = files_.size();
    std::vector<bool> written(n, false), hashed(n, false);
    std::vector<FileReport> digests(n);
    std::optional<FileReport> failure;
    auto take = [&](const FileReport& r) {
      if (r.index < 0 || static_cast<size_t>(r.index) >= n) return;
      const auto i = static_cast<size_t>(r.index);
      if (r.error != 0) {
        if (!failure) failure = r;
      } else if (r.from == static_cast<int32_t>(Reporter::kWriter)) {
        written[i] = true;
      } else if (r.from == static_cast<int32_t>(Reporter::kHasher)) {
        hashed[i] = true;
        digests[i] = r;
      }
    };
    ReadReports(take);
    CloseReports();
    const pid_t pid = pid_;
    const std::optional<int> status = Reap();
    if (failure)
      throw CheckpointError(
          "the checkpoint writer process " + std::to_string(pid) + " could not " + StepName(failure->step) +
          " " + files_[static_cast<size_t>(failure->index)].absolute + ": " + std::strerror(failure->error));
    const auto count = [](const std::vector<bool>& v) { return std::count(v.begin(), v.end(), true); };
    // Reports of every file are what counts when the status is unknown
    // (SIGCHLD ignored: the kernel reaped the writer).
    const bool exited_cleanly = status ? (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) : true;
    if (count(written) != static_cast<long>(n) || count(hashed) != static_cast<long>(n) || !exited_cleanly)
      throw CheckpointError("the checkpoint writer process " + std::to_string(pid) + " " +
                            (status ? DescribeExit(*status) : std::string("vanished")) + " after writing " +
                            std::to_string(count(written)) + " and hashing " + std::to_string(count(hashed)) +
                            " of " + std::to_string(n) + " files");
    PrefaultWritable();
    std::vector<CheckpointFile> out;
    for (size_t i = 0; i < n; ++i)
      out.push_back({files_[i].relative, files_[i].size, Hex(digests[i].digest, sizeof digests[i].digest)});
    return out;
  }

 private:
  // Reads the reports until the writer has exited (it exits after its
  // hasher) and the pipe is drained. Not until the pipe's end of file: a
  // process another thread of the trial forks (a data loader's worker)
  // while the pipe is being set up inherits its writing end and may keep it
  // open long after. Without a pidfd (before Linux 5.3), until the end of
  // file.
  template <typename Take>
  void ReadReports(const Take& take) {
    FileReport r;
    size_t got = 0;
    bool writer_done = false;
    for (;;) {
      if (exited_ >= 0 && !writer_done) {
        pollfd fds[2] = {{reports_, POLLIN, 0}, {exited_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
          if (errno == EINTR) continue;
          writer_done = true;  // cannot wait on it: read to the end of file
        } else if (fds[1].revents != 0) {
          writer_done = true;
          ::fcntl(reports_, F_SETFL, ::fcntl(reports_, F_GETFL) | O_NONBLOCK);  // drain what is left
        } else if (fds[0].revents == 0) {
          continue;
        }
      }
      const ssize_t k = ::read(reports_, reinterpret_cast<char*>(&r) + got, sizeof r - got);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;  // end of file, or drained after the writer exited
      got += static_cast<size_t>(k);
      if (got < sizeof r) continue;
      got = 0;
      take(r);
    }
  }

  // The writer's wait status; nullopt when the kernel reaped it already.
  std::optional<int> Reap() {
    int status = 0;
    pid_t rc;
    do {
      rc = ::waitpid(pid_, &status, 0);
    } while (rc < 0 && errno == EINTR);
    pid_ = -1;
    if (rc < 0) return std::nullopt;
    return status;
  }
  // After the fork every page of the state is write-protected in this
  // process too; once the writer is gone the training thread's next write
  // to each would still fault (about 1 µs a page). Taking those faults here,
  // on the background thread, leaves the training thread none. It changes
  // no byte (MADV_POPULATE_WRITE, Linux 5.14), nor does it where the caller
  // freed or reused that memory since; best effort, and only whole pages
  // inside the files' bytes.
  void PrefaultWritable() const {
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23;
#endif
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    for (const auto& f : files_) {
      const auto begin = (reinterpret_cast<uintptr_t>(f.data) + page - 1) & ~(page - 1);
      const auto end = (reinterpret_cast<uintptr_t>(f.data) + f.size) & ~(page - 1);
      if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
    }
  }
  void CloseReports() {
    if (reports_ >= 0) ::close(reports_);
    reports_ = -1;
    if (exited_ >= 0) ::close(exited_);
    exited_ = -1;
  }

  std::vector<PlannedFile> files_;
  pid_t pid_ = -1;
  int reports_ = -1;
  int exited_ = -1;  // a pidfd of the writer: readable once it exited
};

bool IsInside(const std::string& text) {
  if (text.empty()) return false;
  const fs::path p(text);
  if (p.is_absolute() || p.has_root_name()) return false;
  for (const auto& part : p)
    if (part == ".." || part == "." || part.empty()) return false;
  return true;
}

}  // namespace

void Checkpoints::save_forked(int64_t batches, const std::vector<Bytes>& files,
                              const nlohmann::json& metadata) {
  wait();
  nlohmann::json meta = Metadata(batches, metadata);
  std::set<std::string> names;
  for (const auto& f : files) {
    if (!IsInside(f.path))
      throw CheckpointError("a checkpoint file name must be a relative path inside it, got \"" + f.path +
                            "\"");
    if (f.path == kCheckpointManifest)
      throw CheckpointError(std::string("a checkpoint must not hold ") + kCheckpointManifest +
                            ": the runtime writes it");
    if (!names.insert(fs::path(f.path).lexically_normal().generic_string()).second)
      throw CheckpointError("the checkpoint names file " + f.path + " twice");
    if (f.data == nullptr && f.size > 0) throw CheckpointError("checkpoint file " + f.path + " has no bytes");
  }
  const std::string uuid = NewCheckpointUuid();
  fs::path dir;
  auto writer = std::make_shared<ForkedWriter>(std::vector<PlannedFile>{});
  try {
    dir = storage_->BeginWrite(uuid);
    for (const auto& f : files) {
      const fs::path file = dir / f.path;
      fs::create_directories(file.parent_path());
      PlannedFile planned{f.path, file.string(), static_cast<const char*>(f.data), f.size, EVP_MD_CTX_new()};
      writer->files().push_back(planned);
      if (!planned.sha || EVP_DigestInit_ex(planned.sha, EVP_sha256(), nullptr) != 1)
        throw CheckpointError("cannot start a SHA-256 digest");
    }
    writer->Start();
  } catch (const fs::filesystem_error& e) {
    storage_->Abort(uuid);
    throw CheckpointError(std::string("cannot prepare the checkpoint's folders: ") + e.what());
  } catch (...) {
    storage_->Abort(uuid);
    throw;
  }
  StartInFlightJob(batches, [this, uuid, dir, batches, meta = std::move(meta), writer]() mutable {
    HashingWriter collect = [writer](const fs::path&) { return writer->Collect(); };
    return Finish(uuid, dir, batches, collect, meta);
  });
}

}  // namespace ring::trial
