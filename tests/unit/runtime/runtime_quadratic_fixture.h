#pragma once
// Shared by the tests that run the quadratic example as real processes: the
// trial binary as a child process with its output in files, and readers of
// the checkpoints and metric lines it leaves.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;  // NOLINT: POSIX

namespace ring::trial::quadratic_testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The trial binary as a child process with its output in files.
class Trial {
 public:
  // `env` replaces the RING_* variables of this process's environment.
  Trial(const fs::path& work, std::vector<std::string> args, std::map<std::string, std::string> env = {})
      : out_(work / ("out." + std::to_string(++count_))), err_(work / ("err." + std::to_string(count_))) {
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("RING_", 0) != 0) envs.push_back(*e);
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    args.insert(args.begin(), QUADRATIC_TRIAL_PATH);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!std::freopen(out_.c_str(), "w", stdout) || !std::freopen(err_.c_str(), "w", stderr)) ::_exit(120);
      std::vector<char*> argv, envp;
      for (auto& a : args) argv.push_back(a.data());
      for (auto& e : envs) envp.push_back(e.data());
      argv.push_back(nullptr);
      envp.push_back(nullptr);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(121);
    }
  }
  ~Trial() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  int Wait() {  // the wait status
    if (!reaped_) ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    return status_;
  }
  int ExitCode() {
    int s = Wait();
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  }
  std::string out() const { return ReadFile(out_); }
  std::string err() const { return ReadFile(err_); }

 private:
  static inline int count_ = 0;
  fs::path out_, err_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Complete checkpoints in `root` by their batches (from their manifests).
inline std::map<int64_t, fs::path> Checkpoints(const fs::path& root) {
  std::map<int64_t, fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) continue;
    auto manifest = nlohmann::json::parse(ReadFile(e.path() / ".ring-checkpoint.json"), nullptr, false);
    if (manifest.is_object()) out[manifest["batches"].get<int64_t>()] = e.path();
  }
  return out;
}

// Every file of a checkpoint directory, by relative path.
inline std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  return out;
}

// The runtime's metric lines ("[ring.trial] training batches=N ...") after batch `after`.
inline std::vector<std::string> MetricLinesAfter(const std::string& out, int64_t after) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto pos = line.find(" batches=");
    if (line.rfind("[ring.trial] ", 0) != 0 || pos == std::string::npos) continue;
    if (std::stoll(line.substr(pos + 9)) > after) lines.push_back(line);
  }
  return lines;
}

inline std::string FinalValidationLoss(const std::string& out) {
  auto pos = out.rfind("validation_loss=");
  return pos == std::string::npos ? "" : out.substr(pos, out.find('\n', pos) - pos);
}

inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit = 30s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

}  // namespace ring::trial::quadratic_testing
