#pragma once
// Messages of the agent channel: one WebSocket per agent at /api/v1/agents/ws,
// one JSON object per text frame, discriminated by "type".
//
// agent -> master: hello, heartbeat, state, log
// master -> agent: welcome, start, kill
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/task_kind.h"

#include <nlohmann/json.hpp>

#include "common/agent_slot.h"
#include "common/status.h"

namespace ring::proto {

// A process the agent still supervises (sent on reconnect).
struct RunningProcess {
  std::string allocation_id;
  int rank = 0;
  int64_t pid = 0;
};

// A container runtime an agent found by running it at start
// (docs/containers.md): "podman", "docker", "apptainer" or "singularity".
struct ContainerRuntime {
  std::string name;
  std::string version;
  bool rootless = false;
};

// One bind mount of a trial's container.
struct Mount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
  std::string propagation = "rprivate";
};

// A rank that runs in a container (environment.image): the image of its
// kind of slot, how to get it, and what to mount besides its own folder.
struct Container {
  std::string image;
  std::string runtime;  // the pool's required runtime; empty: the agent chooses
  bool force_pull = false;
  // Docker's auth fields (username, password, serveraddress, email, auth,
  // identitytoken, registrytoken); empty when none. A secret: never logged.
  std::map<std::string, std::string> registry_auth;
  std::string checkpoint_path;  // the checkpoint folder, mounted at its own path
  std::vector<Mount> mounts;    // the experiment's bind_mounts
};

struct Hello {
  std::string agent_id;
  std::string pool = "default";
  std::string address;  // host other ranks use to reach this agent (MASTER_ADDR)
  std::string version;
  std::vector<Slot> slots;
  std::vector<RunningProcess> running;
  // True when the agent runs each task as its owner's Unix account (it can
  // switch users); false in single-user mode, where tasks run as the agent.
  bool runs_as_owner = false;
  // The container runtimes that ran when the agent started (empty: none;
  // absent in hellos of older agents).
  std::vector<ContainerRuntime> container_runtimes;
};

struct Welcome {
  int64_t heartbeat_interval_ms = 1000;
  int64_t heartbeat_timeout_ms = 5000;
};

struct Heartbeat {};

// The Unix account a task runs as, when its owner is linked to one.
struct RunAs {
  int64_t uid = -1;
  int64_t gid = -1;
  std::string user;   // account name, for supplementary groups (may be empty)
  std::string group;  // group name, informational (may be empty)
};

struct Start {
  std::string allocation_id;
  std::string allocation_token;
  int64_t trial_id = 0;                   // RING_TRIAL_ID, for a trial
  int64_t experiment_id = 0;              // RING_EXPERIMENT_ID, for a trial
  int64_t task_id = 0;                    // RING_TASK_ID
  TaskKind task_kind = TaskKind::kTrial;  // RING_TASK_KIND
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr;  // rank 0's agent address
  int master_port = 0;
  std::vector<int> slot_ids;  // slots of this agent given to the allocation
  // Per-node launch (docs/distributed.md): this process serves all of this
  // agent's slots of the allocation and a launcher starts the workers; rank
  // is then the node's index (NODE_RANK) and world_size counts slots.
  bool per_node = false;
  int node_rank = 0;                         // this agent's index among the allocation's agents
  std::vector<std::string> node_addrs;       // each agent's address, in node order (RING_CONTAINER_ADDRS)
  std::vector<int> node_slot_counts;         // each agent's slots of the allocation, same order
  std::string slot_type;                     // "cpu" or "cuda"
  std::string entrypoint;                    // run with /bin/sh -c in the work directory
  std::vector<std::string> entrypoint_argv;  // when not empty: run as is, without a shell
  std::string hparams_json;                  // RING_HPARAMS
  std::string latest_checkpoint;             // RING_LATEST_CHECKPOINT, empty if none
  std::map<std::string, std::string> environment;  // environment.variables
  std::string model_definition_path;               // GET path on the master (tar.gz)
  std::string owner;                               // the Ringmaster user who owns the task
  std::optional<RunAs> run_as;                     // absent: the owner has no linked account
  std::optional<Container> container;              // absent: the rank runs on the agent's host
  // The rank runs in a pseudo-terminal (a shell task's): what it shows goes
  // to the clients attached to it (TerminalOpen), not to its log.
  bool terminal = false;
};

struct Kill {
  std::string allocation_id;
  int64_t grace_ms = 10000;  // SIGTERM, then SIGKILL after this
  std::string reason;
};

enum class ProcessState { kStarting, kRunning, kExited };

struct StateChange {
  std::string allocation_id;
  int rank = 0;
  ProcessState state = ProcessState::kStarting;
  std::optional<int> exit_code;  // when exited normally
  std::optional<int> signal;     // when killed by a signal
  std::string message;           // e.g. "model download failed: ..."
  // The agent stopped the process because it was itself told to stop
  // (SIGTERM: an operator, or Slurm cancelling or preempting its job), not
  // because the master asked; a job agent's such exits are the job's end.
  bool agent_stopping = false;
};

struct LogLine {
  int64_t ts_ms = 0;   // unix epoch milliseconds
  std::string stream;  // "stdout" or "stderr"
  std::string line;    // without the trailing newline
  // Filed under this rank instead of the batch's: a per-node process's line
  // that a worker's "[rank=N] " prefix names (agent/rank_prefix.h).
  std::optional<int> rank;
};

struct LogBatch {
  std::string allocation_id;
  int rank = 0;
  int64_t seq = 0;  // per (allocation, rank) batch counter, for de-duplication
  std::vector<LogLine> lines;
};

// From an agent of a batch job (ringagent --slurm-allocation): the batch
// system is stopping its job (Slurm's SIGTERM on scancel, preemption or the
// time limit, before its SIGKILL); the master asks the allocation's ranks
// to checkpoint and exit, as a preemption.
struct Stopping {
  std::string allocation_id;
  std::string reason;
};

// Terminals of ranks that run in one (Start::terminal). The master opens a
// session for each client that attaches (an id of its own), types into it,
// resizes it and closes it; closing a session leaves the rank running. The
// agent answers with what the terminal shows (its last 64 KiB first, at
// open) and says when a session ended: the rank exited, or it has no such
// terminal. `data` is any bytes (base64 on the wire).
struct TerminalOpen {
  std::string allocation_id;
  int rank = 0;
  std::string session;
  int rows = 24;
  int cols = 80;
};
struct TerminalInput {
  std::string session;
  std::string data;
};
struct TerminalResize {
  std::string session;
  int rows = 24;
  int cols = 80;
};
struct TerminalClose {
  std::string session;
};
struct TerminalOutput {
  std::string session;
  std::string data;
};
struct TerminalClosed {
  std::string session;
  std::string reason;
};

using Message =
    std::variant<Hello, Welcome, Heartbeat, Start, Kill, StateChange, LogBatch, Stopping, TerminalOpen,
                 TerminalInput, TerminalResize, TerminalClose, TerminalOutput, TerminalClosed>;

// Encodes a message as the JSON text of one frame.
std::string Encode(const Message& message);
// Parses one frame; a malformed frame is an error that names the field.
Result<Message> Decode(const std::string& text);

std::string_view ToString(ProcessState s);

void to_json(nlohmann::json& j, const Slot& s);
void from_json(const nlohmann::json& j, Slot& s);

}  // namespace ring::proto
