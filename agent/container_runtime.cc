#include "agent/container_runtime.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/run_command.h"
#include "common/archive.h"

namespace ring {
namespace {

using nlohmann::json;

constexpr RuntimeKind kAllKinds[] = {RuntimeKind::kPodman, RuntimeKind::kDocker, RuntimeKind::kApptainer,
                                     RuntimeKind::kSingularity};
constexpr auto kProbeTimeout = std::chrono::seconds(20);

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

// The absolute path of `name` on `path` (a PATH value), or "".
std::string FindOnPath(const std::string& name, const std::string& path) {
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir.front() != '/') continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::vector<std::string> ProbeCommand(RuntimeKind kind, const std::string& binary) {
  switch (kind) {
    case RuntimeKind::kPodman:
    case RuntimeKind::kDocker:
      return {binary, "info", "--format", "json"};
    case RuntimeKind::kApptainer:
    case RuntimeKind::kSingularity:
      return {binary, "version"};
  }
  return {binary};
}

bool IsPodmanOrDocker(const DetectedRuntime& r) {
  return r.kind == RuntimeKind::kPodman || r.kind == RuntimeKind::kDocker;
}

// The registry of an image reference: its first component when that has a
// dot or a colon or is "localhost"; else Docker Hub.
std::string RegistryOf(const std::string& image) {
  const auto slash = image.find('/');
  if (slash != std::string::npos) {
    const std::string first = image.substr(0, slash);
    if (first.find('.') != std::string::npos || first.find(':') != std::string::npos || first == "localhost")
      return first;
  }
  return "docker.io";
}

// The device list of a rank's GPU slots: their UUIDs where known, else indexes.
std::vector<std::string> GpuDevices(const proto::Start& start, const std::vector<proto::Slot>& slots) {
  std::vector<std::string> devices;
  if (start.slot_type != "cuda") return devices;
  for (int id : start.slot_ids) {
    std::string device = std::to_string(id);
    for (const auto& slot : slots)
      if (slot.id == id && !slot.uuid.empty()) device = slot.uuid;
    devices.push_back(device);
  }
  return devices;
}

std::string Join(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(1, sep)) + item;
  return out;
}

// Variables a container takes from its image rather than from the host.
bool FromImage(const std::string& name) {
  return name == "PATH" || name == "HOME";
}

}  // namespace

const char* ToString(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kPodman:
      return "podman";
    case RuntimeKind::kDocker:
      return "docker";
    case RuntimeKind::kApptainer:
      return "apptainer";
    case RuntimeKind::kSingularity:
      return "singularity";
  }
  return "podman";
}

std::optional<RuntimeKind> ParseRuntimeKind(const std::string& name) {
  for (RuntimeKind kind : kAllKinds)
    if (name == ToString(kind)) return kind;
  return std::nullopt;
}

std::optional<DetectedRuntime> ParseRuntimeInfo(RuntimeKind kind, const std::string& binary,
                                                const std::string& output) {
  DetectedRuntime r;
  r.kind = kind;
  r.binary = binary;
  if (kind == RuntimeKind::kApptainer || kind == RuntimeKind::kSingularity) {
    r.version = Trim(output);
    if (r.version.empty()) return std::nullopt;
    r.rootless = ::geteuid() != 0;
    return r;
  }
  const json j = json::parse(output, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  if (kind == RuntimeKind::kPodman) {
    const auto& version = j.value("version", json::object());
    const auto& host = j.value("host", json::object());
    r.version = version.is_object() ? version.value("Version", "") : "";
    if (host.is_object()) {
      const auto& security = host.value("security", json::object());
      r.rootless = security.is_object() && security.value("rootless", false);
      const auto& oci = host.value("ociRuntime", json::object());
      r.oci_runtime = oci.is_object() ? oci.value("name", "") : "";
    }
    if (r.version.empty()) return std::nullopt;
    return r;
  }
  // docker: the client answers without a daemon, with an empty ServerVersion.
  r.version = j.value("ServerVersion", "");
  if (r.version.empty()) return std::nullopt;
  if (const auto it = j.find("SecurityOptions"); it != j.end() && it->is_array())
    for (const auto& option : *it)
      if (option.is_string() && option.get<std::string>().find("rootless") != std::string::npos)
        r.rootless = true;
  return r;
}

std::vector<DetectedRuntime> DetectContainerRuntimes(ProcessLauncher& launcher, const std::string& wanted,
                                                     const std::string& path,
                                                     std::vector<std::string>& notes) {
  std::vector<DetectedRuntime> found;
  if (wanted == "none") return found;
  std::vector<RuntimeKind> kinds;
  if (wanted == "auto" || wanted.empty()) {
    kinds.assign(std::begin(kAllKinds), std::end(kAllKinds));
  } else {
    std::stringstream names(wanted);
    std::string name;
    while (std::getline(names, name, ','))
      if (auto kind = ParseRuntimeKind(Trim(name))) kinds.push_back(*kind);
  }
  for (RuntimeKind kind : kinds) {
    const std::string binary = FindOnPath(ToString(kind), path);
    if (binary.empty()) {
      if (wanted != "auto" && !wanted.empty()) notes.push_back(std::string(ToString(kind)) + ": not on PATH");
      continue;
    }
    auto result = RunCommand(launcher, ProbeCommand(kind, binary), {"PATH=" + path, "HOME=/root"},
                             std::chrono::duration_cast<std::chrono::milliseconds>(kProbeTimeout));
    if (!result.ok()) {
      notes.push_back(binary + ": " + result.status().message());
      continue;
    }
    std::optional<DetectedRuntime> runtime;
    if (result->ok()) runtime = ParseRuntimeInfo(kind, binary, result->out);
    if (!runtime) {
      notes.push_back(
          binary + " cannot run containers: " +
          (result->LastError().empty() ? std::string("no version in its answer") : result->LastError()));
      continue;
    }
    found.push_back(std::move(*runtime));
  }
  return found;
}

const DetectedRuntime* ChooseRuntime(const std::vector<DetectedRuntime>& runtimes,
                                     const std::string& required) {
  for (const auto& r : runtimes)
    if (required.empty() || required == ToString(r.kind)) return &r;
  return nullptr;
}

std::vector<Ulimit> ContainerUlimits() {
  std::vector<Ulimit> out;
  for (auto [name, resource] : {std::pair{"nofile", RLIMIT_NOFILE}, std::pair{"nproc", RLIMIT_NPROC}}) {
    rlimit limit{};
    if (::getrlimit(resource, &limit) != 0) continue;
    uint64_t hard = limit.rlim_max == RLIM_INFINITY ? kMaxContainerProcs : limit.rlim_max;
    uint64_t soft = limit.rlim_cur == RLIM_INFINITY ? hard : limit.rlim_cur;
    if (std::string(name) == "nproc") hard = std::min(hard, kMaxContainerProcs);
    soft = std::min(soft, hard);
    out.push_back({name, soft, hard});
  }
  return out;
}

ContainerProcess ContainerRunCommand(const DetectedRuntime& runtime, const proto::Start& start,
                                     const ContainerRun& run) {
  const proto::Container& c = *start.container;
  ContainerProcess p;
  // The runtime's own environment is the agent's, never the rank's: a
  // user's PATH must not choose the binaries a root runtime runs.
  p.env = run.runtime_env;
  if (!p.env.count("PATH")) p.env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  const std::vector<std::string> gpus = GpuDevices(start, run.slots);
  std::vector<std::string>& a = p.argv;
  if (IsPodmanOrDocker(runtime)) {
    a.push_back(runtime.binary);
    if (runtime.kind == RuntimeKind::kPodman && !runtime.oci_runtime.empty())
      a.insert(a.end(), {"--runtime", runtime.oci_runtime});
    a.insert(a.end(), {"run", "--rm", "--name", run.name, "--label", "ring.allocation=" + start.allocation_id,
                       "--label", "ring.agent=" + run.scope, "--network", "host", "--ipc", "host",
                       "--cap-drop", "all", "--security-opt", "no-new-privileges", "--pull", "never"});
    for (const Ulimit& u : run.ulimits)
      a.insert(a.end(), {"--ulimit", u.name + "=" + std::to_string(u.soft) + ":" + std::to_string(u.hard)});
    if (run.user) {
      a.insert(a.end(), {"--user", std::to_string(run.user->uid) + ":" + std::to_string(run.user->gid)});
      for (uint32_t g : run.user->groups)
        if (g != run.user->gid) a.insert(a.end(), {"--group-add", std::to_string(g)});
    }
    if (run.terminal) a.insert(a.end(), {"--interactive", "--tty"});
    a.insert(a.end(), {"-v", run.work_dir + ":" + run.work_dir, "-w", run.work_dir});
    if (!run.python_dir.empty()) a.insert(a.end(), {"-v", run.python_dir + ":" + run.python_dir + ":ro"});
    if (!c.checkpoint_path.empty()) a.insert(a.end(), {"-v", c.checkpoint_path + ":" + c.checkpoint_path});
    for (const auto& m : c.mounts)
      a.insert(a.end(), {"-v", m.host_path + ":" + m.container_path + ":" + (m.read_only ? "ro" : "rw") +
                                   "," + m.propagation});
    if (!gpus.empty()) {
      if (runtime.kind == RuntimeKind::kDocker) {
        a.insert(a.end(), {"--gpus", "\"device=" + Join(gpus, ',') + "\""});
      } else {
        for (const auto& gpu : gpus) a.insert(a.end(), {"--device", "nvidia.com/gpu=" + gpu});
      }
    }
    // In a file only the agent reads: not in argv, where `ps` shows the
    // token, nor in the runtime's own environment, where a user's
    // LD_PRELOAD or CONTAINERS_CONF would act on a runtime running as root.
    // A value on several lines, which the file cannot hold, goes in argv.
    Environment vars;
    for (const auto& [name, value] : run.env)
      if (!FromImage(name)) vars[name] = value;
    if (!gpus.empty()) vars["NVIDIA_VISIBLE_DEVICES"] = Join(gpus, ',');
    if (!run.env_file.empty()) a.insert(a.end(), {"--env-file", run.env_file});
    for (const auto& [name, value] : vars) {
      if (value.find('\n') != std::string::npos || value.find('\r') != std::string::npos ||
          run.env_file.empty())
        a.insert(a.end(), {"-e", name + "=" + value});
      else
        p.env_file_text += name + "=" + value + "\n";
    }
    a.push_back(c.image);
  } else {
    // Apptainer and Singularity: a process of the rank's own account, no
    // daemon; a bare name is a registry image, a path a local .sif file.
    const std::string prefix = runtime.kind == RuntimeKind::kApptainer ? "APPTAINERENV_" : "SINGULARITYENV_";
    a.insert(a.end(), {runtime.binary, "exec", "--cleanenv", "--containall", "--no-home", "--pwd",
                       run.work_dir, "--bind", run.work_dir});
    if (!run.python_dir.empty()) a.insert(a.end(), {"--bind", run.python_dir + ":" + run.python_dir + ":ro"});
    if (!c.checkpoint_path.empty()) a.insert(a.end(), {"--bind", c.checkpoint_path});
    for (const auto& m : c.mounts)
      a.insert(a.end(), {"--bind", m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : "")});
    if (!gpus.empty()) a.push_back("--nv");
    for (const auto& [name, value] : run.env)
      if (!FromImage(name)) p.env[prefix + name] = value;
    if (!gpus.empty()) p.env[prefix + "CUDA_VISIBLE_DEVICES"] = Join(gpus, ',');
    a.push_back(c.image.front() == '/' ? c.image : "docker://" + c.image);
  }
  a.insert(a.end(), run.command.begin(), run.command.end());
  return p;
}

std::vector<std::string> ImageExistsCommand(const DetectedRuntime& runtime, const std::string& image) {
  if (runtime.kind == RuntimeKind::kDocker)
    return {runtime.binary, "image", "inspect", "--format", "{{.Id}}", image};
  return {runtime.binary, "image", "exists", image};
}

std::vector<std::string> PullCommand(const DetectedRuntime& runtime, const std::string& image,
                                     const std::string& auth_dir) {
  if (runtime.kind == RuntimeKind::kDocker) {
    if (auth_dir.empty()) return {runtime.binary, "pull", "--quiet", image};
    return {runtime.binary, "--config", auth_dir, "pull", "--quiet", image};
  }
  std::vector<std::string> out{runtime.binary, "pull", "--quiet"};
  if (!auth_dir.empty()) out.insert(out.end(), {"--authfile", auth_dir + "/config.json"});
  out.push_back(image);
  return out;
}

std::string RegistryAuthJson(const std::map<std::string, std::string>& auth, const std::string& image) {
  const auto get = [&](const char* key) {
    const auto it = auth.find(key);
    return it == auth.end() ? std::string() : it->second;
  };
  std::string server = get("serveraddress");
  if (server.empty()) server = RegistryOf(image);
  json entry = json::object();
  if (!get("auth").empty())
    entry["auth"] = get("auth");
  else if (!get("username").empty())
    entry["auth"] = Base64Encode(get("username") + ":" + get("password"));
  if (!get("identitytoken").empty()) entry["identitytoken"] = get("identitytoken");
  if (!get("registrytoken").empty()) entry["registrytoken"] = get("registrytoken");
  if (!get("email").empty()) entry["email"] = get("email");
  return json{{"auths", {{server, entry}}}}.dump();
}

std::vector<std::string> StopCommand(const DetectedRuntime& runtime, const std::string& name,
                                     std::chrono::milliseconds grace) {
  const auto seconds = std::to_string((grace.count() + 999) / 1000);
  return {runtime.binary, "stop", "--time", seconds, name};
}

std::vector<std::string> RemoveCommand(const DetectedRuntime& runtime, const std::string& name) {
  if (runtime.kind == RuntimeKind::kDocker) return {runtime.binary, "rm", "--force", name};
  return {runtime.binary, "rm", "--force", "--ignore", "--time", "0", name};
}

bool HasDetachedContainers(const DetectedRuntime& runtime) {
  return IsPodmanOrDocker(runtime);
}

std::vector<std::string> ListAgentContainersCommand(const DetectedRuntime& runtime,
                                                    const std::string& scope) {
  return {runtime.binary, "ps", "--all", "--quiet", "--filter", "label=ring.agent=" + scope};
}

std::string ContainerScope(const std::string& agent_id, const std::string& work_dir) {
  return agent_id + "@" + std::filesystem::absolute(work_dir).lexically_normal().string();
}

std::string ContainerName(const std::string& scope, const std::string& allocation_id, int rank) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: the same in every build and process
  for (unsigned char c : scope) hash = (hash ^ c) * 1099511628211ull;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(hash ^ (hash >> 32)));
  return std::string("ring-") + hex + "-" + allocation_id + ".r" + std::to_string(rank);
}

}  // namespace ring
