#include "rank_processes.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>

namespace ring::bench {
namespace {

using Clock = std::chrono::steady_clock;

bool WriteAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Reads `bytes` unless `deadline` passes first.
bool ReadAll(int fd, void* data, size_t bytes, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || poll(&pfd, 1, static_cast<int>(left)) <= 0) return false;
    const ssize_t n = read(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunChild(int rank, const std::string& dir, const RankBody& body, int fd) {
  int code = 0;
  try {
    const std::vector<double> figures = body(rank, dir);
    const uint64_t n = figures.size();
    if (rank == 0 && !(WriteAll(fd, &n, sizeof n) && WriteAll(fd, figures.data(), n * sizeof(double))))
      code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    code = 3;
  }
  std::fflush(stdout);
  _exit(code);
}

}  // namespace

std::optional<std::vector<double>> RunRanks(int world, const RankBody& body, std::chrono::seconds timeout) {
  char dir_template[] = "/tmp/ring-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      RunChild(r, dir, body, fds[1]);
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  // Rank 0 writes before it exits; read first so a large result cannot block it.
  const auto deadline = Clock::now() + timeout;
  std::vector<double> figures;
  uint64_t n = 0;
  bool ok = ReadAll(fds[0], &n, sizeof n, deadline) && n < (1u << 24);
  if (ok) {
    figures.resize(n);
    ok = ReadAll(fds[0], figures.data(), n * sizeof(double), deadline);
  }
  close(fds[0]);
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        for (pid_t p : pids) kill(p, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!ok) return std::nullopt;
  return figures;
}

}  // namespace ring::bench
