#pragma once
// The container runtimes of this host (docs/containers.md): found at start by
// running each (`podman info --format json`, `docker info --format json`,
// `apptainer version`), reported in the hello, and the command lines the
// agent runs with them: a rank's container, its image check and pull, its
// stop and removal. The command lines are pure functions of their inputs
// (tests/unit/agent/container_command_test.cc); only Detect runs anything.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "agent/process_launcher.h"
#include "agent/trial_environment.h"
#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

enum class RuntimeKind { kPodman, kDocker, kApptainer, kSingularity };
const char* ToString(RuntimeKind kind);
std::optional<RuntimeKind> ParseRuntimeKind(const std::string& name);

struct DetectedRuntime {
  RuntimeKind kind = RuntimeKind::kPodman;
  std::string binary;  // absolute path of its command
  std::string version;
  bool rootless = false;    // podman or docker running without root
  std::string oci_runtime;  // podman: the OCI runtime it uses (runc, crun), passed as --runtime
  proto::ContainerRuntime Info() const { return {ToString(kind), version, rootless}; }
};

// What `podman info --format json`, `docker info --format json` or
// `apptainer version` printed, read into a runtime; nullopt when the output
// says the runtime cannot run containers (docker without a daemon).
std::optional<DetectedRuntime> ParseRuntimeInfo(RuntimeKind kind, const std::string& binary,
                                                const std::string& output);

// Runs each runtime of `wanted` found on PATH ("auto": podman, docker,
// apptainer, singularity; "none": nothing; else a comma-separated list) and
// keeps those that answer. `notes` gets one line per runtime left out.
std::vector<DetectedRuntime> DetectContainerRuntimes(ProcessLauncher& launcher, const std::string& wanted,
                                                     const std::string& path,
                                                     std::vector<std::string>& notes);

// The runtime a rank uses: the one `required` names, else the first found.
const DetectedRuntime* ChooseRuntime(const std::vector<DetectedRuntime>& runtimes,
                                     const std::string& required);

// One resource limit of a container, "name=soft:hard".
struct Ulimit {
  std::string name;  // nofile, nproc
  uint64_t soft = 0;
  uint64_t hard = 0;
};

// The limits a container gets: the agent's own soft and hard limits of open
// files and processes, so that a runtime never has to raise one (root here
// may lack CAP_SYS_RESOURCE); nproc at most kMaxContainerProcs.
std::vector<Ulimit> ContainerUlimits();
inline constexpr uint64_t kMaxContainerProcs = 32768;

// Everything one rank's container command is made of.
// What tells one agent's containers from those of any other agent on the
// host, of this cluster or another: "<agent id>@<absolute work folder>".
// Containers carry it as the label ring.agent=<scope>; an agent restarted
// with the same id and work folder finds what its predecessor left.
std::string ContainerScope(const std::string& agent_id, const std::string& work_dir);
// A rank's container name, unique on the host: "ring-<hash of the
// scope>-<allocation>.r<rank>" (two clusters both have an allocation 2.0).
std::string ContainerName(const std::string& scope, const std::string& allocation_id, int rank);

struct ContainerRun {
  std::string name;      // unique per rank on the host: ContainerName
  std::string work_dir;  // the rank's folder: mounted at its own path and the working directory
  // The ids the container runs as (podman and docker: --user); absent in
  // single-user mode. Apptainer runs as the process that starts it.
  std::optional<SwitchIds> user;
  Environment env;                   // the rank's environment, as a bare rank gets it
  Environment runtime_env;           // the runtime's own: the agent's allowed environment
  std::vector<std::string> command;  // what runs inside
  std::vector<proto::Slot> slots;    // the agent's slots (GPU UUIDs)
  std::vector<Ulimit> ulimits;
  std::string scope;  // labels the container ring.agent=<scope> (ContainerScope)
  // podman and docker: where the rank's variables are written for
  // --env-file (a file only the agent reads); empty: all in argv.
  std::string env_file;
  // The rank runs in a terminal (a shell): podman and docker keep stdin
  // open and give the container a terminal of its own (-i -t), which they
  // relay to the agent's and resize with it; apptainer runs in the agent's.
  bool terminal = false;
  // The runtime's Python folder (ring_notebook, the determined package),
  // mounted read-only at its own path, where PYTHONPATH names it; empty: none.
  std::string python_dir;
};

// The process the agent launches for a rank in a container: argv, the
// environment of the runtime's own process (the agent's PATH; for
// Apptainer the rank's variables as APPTAINERENV_NAME), and for podman and
// docker the text of ContainerRun::env_file, which the agent writes before
// the launch: the rank's variables are neither in argv (`ps` would show the
// token) nor in the environment of a runtime that runs as root.
struct ContainerProcess {
  std::vector<std::string> argv;
  Environment env;
  std::string env_file_text;
};
ContainerProcess ContainerRunCommand(const DetectedRuntime& runtime, const proto::Start& start,
                                     const ContainerRun& run);

// Exit 0 when the image is in the local store (podman and docker).
std::vector<std::string> ImageExistsCommand(const DetectedRuntime& runtime, const std::string& image);
// Pulls the image; `auth_dir` holds config.json with the credentials ("" for none).
std::vector<std::string> PullCommand(const DetectedRuntime& runtime, const std::string& image,
                                     const std::string& auth_dir);
// A docker config.json with the credentials of `auth` for the image's registry.
std::string RegistryAuthJson(const std::map<std::string, std::string>& auth, const std::string& image);
// Stops the container (SIGTERM, SIGKILL after `grace`) and removes it.
std::vector<std::string> StopCommand(const DetectedRuntime& runtime, const std::string& name,
                                     std::chrono::milliseconds grace);
std::vector<std::string> RemoveCommand(const DetectedRuntime& runtime, const std::string& name);
// Whether the runtime keeps containers apart from the process that starts
// them (podman, docker), so that stopping that process is not enough.
bool HasDetachedContainers(const DetectedRuntime& runtime);
// Lists the ids of the containers labelled ring.agent=<scope>, one a line.
std::vector<std::string> ListAgentContainersCommand(const DetectedRuntime& runtime, const std::string& scope);

}  // namespace ring
