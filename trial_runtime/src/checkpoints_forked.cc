// Checkpoints::save_forked: a copy-on-write snapshot taken by fork(). The
// child (the writer) sees the parent's memory as it was at the fork; it
// writes and hashes the files with plain system calls and reports each
// file's digest on a pipe, then exits. The parent's background thread reads
// the reports, reaps the writer and commits and registers the checkpoint
// (Checkpoints::Finish), so nothing after the fork needs the child to take a
// lock another thread of the parent may have held when it forked.
#include <fcntl.h>
#include <openssl/evp.h>
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

// What the writer reports for each file, in order.
struct FileReport {
  int32_t error = 0;  // errno of the step that failed; 0 when the file is written
  int32_t step = 0;   // a WriterStep
  unsigned char digest[32] = {};
};

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

// The child of the fork. Only system calls and the digests' updates (plain
// computation on contexts made before the fork): no allocation, no locks,
// no C++ library state, no libtorch, no Python. Ends with _exit.
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
  constexpr size_t kChunk = 16 << 20;
  for (const auto& f : files) {
    FileReport report;
    auto fail = [&](WriterStep step) {
      report.error = errno != 0 ? errno : EIO;
      report.step = static_cast<int32_t>(step);
      WriteAll(report_fd, &report, sizeof report);
      ::_exit(3);
    };
    const int fd = ::open(f.absolute.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) fail(WriterStep::kOpen);
    size_t done = 0;
    while (done < f.size) {
      const ssize_t n = ::write(fd, f.data + done, std::min(kChunk, f.size - done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(WriterStep::kWrite);
      // The disk writes this chunk back while the next one is hashed.
      ::sync_file_range(fd, static_cast<off_t>(done), n, SYNC_FILE_RANGE_WRITE);
      if (EVP_DigestUpdate(f.sha, f.data + done, static_cast<size_t>(n)) != 1) fail(WriterStep::kHash);
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) fail(WriterStep::kClose);
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(f.sha, report.digest, &len) != 1 || len != sizeof report.digest)
      fail(WriterStep::kHash);
    if (!WriteAll(report_fd, &report, sizeof report)) ::_exit(4);
  }
  ::_exit(0);
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
  }

  // Waits for the writer: every file with its size and SHA-256, or a
  // CheckpointError saying what went wrong.
  std::vector<CheckpointFile> Collect() {
    std::vector<FileReport> reports;
    FileReport r;
    size_t got = 0;
    for (;;) {
      const ssize_t n = ::read(reports_, reinterpret_cast<char*>(&r) + got, sizeof r - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
      if (got == sizeof r) {
        reports.push_back(r);
        got = 0;
      }
    }
    CloseReports();
    const pid_t pid = pid_;
    const std::optional<int> status = Reap();
    if (!reports.empty() && reports.back().error != 0) {
      const auto& last = reports.back();
      throw CheckpointError("the checkpoint writer process " + std::to_string(pid) + " could not " +
                            StepName(last.step) + " " + files_[reports.size() - 1].absolute + ": " +
                            std::strerror(last.error));
    }
    // Reports of every file are what counts when the status is unknown
    // (SIGCHLD ignored: the kernel reaped the writer).
    const bool exited_cleanly = status ? (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) : true;
    if (reports.size() != files_.size() || !exited_cleanly)
      throw CheckpointError("the checkpoint writer process " + std::to_string(pid) + " " +
                            (status ? DescribeExit(*status) : std::string("vanished")) + " after " +
                            std::to_string(reports.size()) + " of " + std::to_string(files_.size()) +
                            " files");
    PrefaultWritable();
    std::vector<CheckpointFile> out;
    for (size_t i = 0; i < files_.size(); ++i)
      out.push_back({files_[i].relative, files_[i].size, Hex(reports[i].digest, sizeof reports[i].digest)});
    return out;
  }

 private:
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
  // no byte (MADV_POPULATE_WRITE, Linux 5.14); best effort, and only whole
  // pages inside the files' bytes.
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
  }

  std::vector<PlannedFile> files_;
  pid_t pid_ = -1;
  int reports_ = -1;
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
