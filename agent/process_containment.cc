#include "agent/process_containment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace ring {
namespace {

using Clock = std::chrono::steady_clock;
// How long KillAll waits for a group to empty, and how often it looks.
constexpr auto kKillTimeout = std::chrono::seconds(5);
constexpr auto kKillPoll = std::chrono::milliseconds(5);

bool IsFilesystem(const std::string& path, long magic) {
  struct statfs fs {};
  return ::statfs(path.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == magic;
}

// The agent's own cgroup path in the hierarchy whose /proc/self/cgroup line
// satisfies `match` (cgroup v2: "0::/path"; v1: "N:controllers:/path").
std::string OwnCgroup(bool v2, const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string id = line.substr(0, first);
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (v2 && id == "0" && controllers.empty()) return path;
    if (!v2) {
      std::stringstream list(controllers);
      std::string c;
      while (std::getline(list, c, ','))
        if (c == controller) return path;
    }
  }
  return {};
}

bool WriteText(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Removes the empty groups of `folder`, then the folder if it is empty.
void RemoveEmpty(const std::string& folder) {
  if (DIR* dir = ::opendir(folder.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.') ::rmdir((folder + "/" + entry->d_name).c_str());
    }
    ::closedir(dir);
  }
  ::rmdir(folder.c_str());
}

// Folders that agents of this id which are no longer running left in `base`
// ("ringagent-<id>.<pid>"): their empty groups go, and they do when empty;
// groups still holding processes stay for an operator to look at.
void RemoveLeftovers(const std::string& base, const std::string& agent_id) {
  const std::string prefix = "ringagent-" + agent_id + ".";
  DIR* dir = ::opendir(base.c_str());
  if (!dir) return;
  std::vector<std::string> stale;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (entry->d_type != DT_DIR || name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(std::stoi(pid), 0) != 0 && errno == ESRCH) stale.push_back(base + "/" + name);
  }
  ::closedir(dir);
  for (const auto& folder : stale) RemoveEmpty(folder);
}

// Makes <mount><own path>/ringagent-<id>.<pid> (the pid keeps two agents of
// one id, as tests start them, apart); empty when it cannot.
std::string MakeRoot(const std::string& mount, const std::string& own, const std::string& agent_id,
                     std::string& why) {
  std::string base = mount + (own == "/" ? "" : own);
  RemoveLeftovers(base, agent_id);
  std::string root = base + "/ringagent-" + agent_id + "." + std::to_string(::getpid());
  if (::mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) {
    why += "cannot make " + root + ": " + std::strerror(errno) + "; ";
    return {};
  }
  if (::access((root + "/cgroup.procs").c_str(), W_OK) != 0) {
    why += root + "/cgroup.procs is not writable; ";
    return {};
  }
  return root;
}

}  // namespace

const char* ToString(ContainmentKind kind) {
  switch (kind) {
    case ContainmentKind::kCgroup2:
      return "cgroup2";
    case ContainmentKind::kFreezer:
      return "freezer";
    case ContainmentKind::kProcessGroup:
      return "process_group";
  }
  return "process_group";
}

bool ParseContainment(const std::string& text, bool& is_auto, ContainmentKind& kind) {
  is_auto = text == "auto";
  if (is_auto) return true;
  for (auto k : {ContainmentKind::kCgroup2, ContainmentKind::kFreezer, ContainmentKind::kProcessGroup}) {
    if (text == ToString(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

ProcessContainment ProcessContainment::Detect(const std::string& agent_id,
                                              const std::vector<ContainmentKind>& wanted, std::string& why) {
  ProcessContainment result;
  for (ContainmentKind kind : wanted) {
    std::string root;
    if (kind == ContainmentKind::kCgroup2) {
      std::string mount;
      if (IsFilesystem("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC)) {
        mount = "/sys/fs/cgroup";
      } else if (IsFilesystem("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC)) {
        mount = "/sys/fs/cgroup/unified";  // hybrid mode: v1 controllers, v2 for tracking
      } else {
        why += "no cgroup v2 hierarchy is mounted; ";
        continue;
      }
      std::string own = OwnCgroup(true, "");
      if (own.empty()) {
        why += "the agent has no cgroup v2 path in /proc/self/cgroup; ";
        continue;
      }
      root = MakeRoot(mount, own, agent_id, why);
    } else if (kind == ContainmentKind::kFreezer) {
      const std::string mount = "/sys/fs/cgroup/freezer";
      if (!IsFilesystem(mount, CGROUP_SUPER_MAGIC)) {
        why += "no cgroup v1 freezer is mounted; ";
        continue;
      }
      std::string own = OwnCgroup(false, "freezer");
      if (own.empty()) {
        why += "the agent has no freezer path in /proc/self/cgroup; ";
        continue;
      }
      root = MakeRoot(mount, own, agent_id, why);
    } else {
      return result;
    }
    if (root.empty()) continue;
    result.kind_ = kind;
    result.root_ = root;
    return result;
  }
  return result;
}

Result<int> ProcessContainment::Create(const std::string& name) const {
  if (kind_ == ContainmentKind::kProcessGroup) return -1;
  const std::string path = Path(name);
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return Internal("cannot make the cgroup " + path + ": " + std::strerror(errno));
  int fd = ::open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot open " + path + "/cgroup.procs: " + std::strerror(errno));
  return fd;
}

std::vector<int> ProcessContainment::Pids(const std::string& name) const {
  std::vector<int> pids;
  if (kind_ == ContainmentKind::kProcessGroup) return pids;
  std::stringstream text(ReadText(Path(name) + "/cgroup.procs"));
  int pid = 0;
  while (text >> pid) pids.push_back(pid);
  return pids;
}

void ProcessContainment::SignalAll(const std::string& name, int signal) const {
  for (int pid : Pids(name)) ::kill(pid, signal);
}

bool ProcessContainment::KillAll(const std::string& name) const {
  if (kind_ == ContainmentKind::kProcessGroup) return true;
  const std::string path = Path(name);
  const auto deadline = Clock::now() + kKillTimeout;
  if (kind_ == ContainmentKind::kCgroup2) {
    // cgroup.kill (Linux 5.14+) kills every process at once, forks included;
    // without it, freezing stops forks while the pids are killed one by one.
    if (!WriteText(path + "/cgroup.kill", "1")) WriteText(path + "/cgroup.freeze", "1");
  }
  while (true) {
    auto pids = Pids(name);
    if (pids.empty()) return true;
    if (Clock::now() >= deadline) return false;
    if (kind_ == ContainmentKind::kFreezer) {
      // A v1 freezer holds killed tasks until thawed: freeze (no new forks),
      // kill all, thaw so the kills take effect.
      WriteText(path + "/freezer.state", "FROZEN");
      for (int i = 0; i < 200 && ReadText(path + "/freezer.state").rfind("FROZEN", 0) != 0; ++i)
        std::this_thread::sleep_for(kKillPoll);
      for (int pid : Pids(name)) ::kill(pid, SIGKILL);
      WriteText(path + "/freezer.state", "THAWED");
    } else {
      for (int pid : pids) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(kKillPoll);
  }
}

void ProcessContainment::Remove(const std::string& name) const {
  if (kind_ == ContainmentKind::kProcessGroup) return;
  const std::string path = Path(name);
  // The kernel may take a moment to see the last task leave.
  for (int i = 0; i < 200; ++i) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    std::this_thread::sleep_for(kKillPoll);
  }
}

void ProcessContainment::RemoveRoot() const {
  if (!root_.empty()) ::rmdir(root_.c_str());
}

}  // namespace ring
