#pragma once
// The master's settings: defaults here, then master.yaml (--config), then
// command-line flags. Validated once at start.
#include <cstdint>
#include <string>

#include <vector>

#include "common/status.h"
#include "common/task_config.h"
#include "master/maintenance/retention.h"
#include "master/notifications/webhook_settings.h"
#include "master/proxy/task_proxy.h"
#include "master/rm/slurmrm/slurm_options.h"
#include "master/scheduler/pool_settings.h"

namespace ring {

// master.yaml `tls: {cert_file, key_file}`, or --tls-cert and --tls-key:
// both set = the master serves HTTPS (and wss) only; both empty = plain HTTP.
struct MasterTlsConfig {
  std::string cert_file;  // PEM: the server certificate, then any intermediates
  std::string key_file;   // PEM: its private key, unencrypted
  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// master.yaml `interactive:` shells' and notebooks' idle timeouts.
struct InteractiveSettings {
  IdleTimeoutLimits idle;                     // idle_timeout (the default), max_idle_timeout
  int64_t notebook_look_interval_ms = 10000;  // how often each notebook's Jupyter is asked whether it is idle
};

struct MasterConfig {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0 picks a free port
  std::string data_dir;                   // default $HOME/.ringmaster
  std::string db;                         // default <data_dir>/ringmaster.db
  std::string port_file;                  // receives the bound port (for tests)
  std::string webui_dir;                  // static UI files; default <bin>/../webui
  std::string cluster_token_file;         // agents' secret (0600); default <data_dir>/cluster-token
  std::string admin_password_file;        // the admin's first password; empty: a random one, logged once
  int64_t session_ttl_hours = 168;        // how long a sign-in token lasts
  std::string log_level = "info";         // trace, debug, info, warn, error
  std::string log_format = "text";        // text, or json (one object per line)
  int64_t heartbeat_interval_ms = 1000;   // how often agents send heartbeats
  int64_t heartbeat_timeout_ms = 10000;   // silence that closes an agent's connection
  int64_t reconnect_window_ms = 25000;    // a disconnected agent is lost after this; its trials move
  std::string checkpoint_root;            // shared_fs default for configs without checkpoint_storage
  // checkpoint_storage.allowed_roots: absolute folders an experiment's
  // host_path may be (or be below); checkpoint_root is always allowed.
  std::vector<std::string> checkpoint_allowed_roots;
  bool experiments_team_readable = true;      // false: owners, admins, workspace members read
  int64_t max_streamed_answers = 8;           // checkpoint downloads, backups, model definitions at once
  int64_t kill_grace_ms = 10000;              // SIGTERM to SIGKILL for trial processes
  int64_t max_model_bytes = 64ll << 20;       // model definition (tar.gz) limit
  int64_t request_timeout_ms = 30000;         // reading one request, and idle keep-alive
  int64_t max_connections = 4096;             // HTTP connections open at once; more get a 503
  int64_t max_connections_per_address = 256;  // of those, from one client address; agents not counted
  // Addresses or CIDR ranges (the agents' hosts) whose connections count
  // only against max_connections, not max_connections_per_address.
  std::vector<std::string> connection_cap_exempt_addresses;
  int64_t max_queued_sign_ins = 64;         // sign-ins waiting for password hashing; more get a 429
  int64_t max_failed_logins_per_user = 20;  // in a row from any address; then new addresses wait
  int64_t max_header_bytes = 64 * 1024;     // request line and headers; more get a 431
  double log_lines_per_second = 1000;       // per allocation; lines beyond are dropped, with a notice
  double log_burst_lines = 20000;           // how far a burst may go above that rate
  int64_t max_log_line_bytes = 64 * 1024;   // longer log lines are cut
  double log_bytes_per_second = 1 << 20;    // per allocation; lines beyond are dropped, with a notice
  double log_burst_bytes = 16 << 20;        // how far a burst may go above that rate
  int64_t max_log_page_bytes = 4 << 20;     // log text in one answer of GET /trials/{id}/logs
  int threads = 2;                          // io threads
  // Threads of the agents' WebSocket connections (plain TCP; over TLS they
  // stay on the io threads); 0: on the io threads. Their nice value is the
  // master's plus agent_threads_nice, so heartbeats wait behind users'
  // requests when the master's cores are full.
  int agent_threads = 1;
  int agent_threads_nice = 5;
  // The time slice in microseconds (Linux 6.12+; 0: the kernel's) of every
  // thread of the master but the agent threads: shorter than theirs, so work
  // for users (a request, a hop to the lifecycle thread) preempts them.
  int thread_slice_us = 100;
  MasterTlsConfig tls;  // tls: {cert_file, key_file}; HTTPS only when set
  std::vector<PoolSettings> resource_pools = DefaultPools();  // resource_pools: [...]
  // The pools whose resource_manager is slurm; the others run on our agents.
  std::vector<SlurmPoolOptions> slurm_pools;
  RetentionOptions retention;  // retention: {interval_minutes, log_retention_days, metrics_*}
  // proxy: {listen, external_url, idle_timeout_ms, max_connections_per_user}:
  // the task proxy's own origin (TLS like the main listener). Its listen
  // defaults to listen's host and a free port, logged and named in each link.
  ProxySettings proxy;
  // interactive: {idle_timeout, max_idle_timeout, notebook_look_interval_ms}.
  InteractiveSettings interactive;
  // webhooks: {allowed_urls, timeout, retries, retry_delay, max_queued}.
  WebhookSettings webhooks;

  // Reads a master.yaml; unknown keys are errors naming them.
  static Result<MasterConfig> FromYamlFile(const std::string& path);
  // Fills derived defaults and checks every field.
  Status Finalize(const std::string& argv0);
};

}  // namespace ring
