#include "master/master_config.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/task_config.h"
#include "master/http/address_ranges.h"
#include "master/http/http_server.h"
#include "master/slurm_pool_config.h"
#include "master/webhook_config.h"

namespace ring {
namespace {

// resource_pools: [{name, description, scheduler: {type, preemption, fitting_policy}, launch,
// allowed_users, resource_manager}]
Result<std::vector<PoolSettings>> ParsePools(const std::string& path, const YAML::Node& node,
                                             std::vector<SlurmPoolOptions>& slurm_pools) {
  if (!node.IsSequence() || node.size() == 0)
    return YamlKeyError(path, node, "resource_pools must be a non-empty list of pools");
  std::vector<PoolSettings> pools;
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const auto& p = node[i];
    const std::string at = "resource_pools[" + std::to_string(i) + "]";
    if (!p.IsMap()) return YamlKeyError(path, p, at + " must be a map with a name");
    PoolSettings pool;
    std::optional<SlurmPoolOptions> slurm;
    YAML::Node zero_slot_tasks;  // where it was set, for a Slurm pool's refusal
    for (const auto& kv : p) {
      const auto key = kv.first.as<std::string>();
      if (key == "name") {
        pool.name = kv.second.as<std::string>();
      } else if (key == "description") {
        pool.description = kv.second.as<std::string>();
      } else if (key == "scheduler") {
        if (!kv.second.IsMap()) return YamlKeyError(path, kv.second, at + ".scheduler must be a map");
        for (const auto& s : kv.second) {
          const auto skey = s.first.as<std::string>();
          if (skey == "type")
            pool.scheduler = s.second.as<std::string>();
          else if (skey == "preemption")
            pool.preemption = s.second.as<bool>();
          else if (skey == "fitting_policy")
            pool.fitting_policy = s.second.as<std::string>();
          else
            return YamlKeyError(path, s.first, "unknown key \"" + at + ".scheduler." + skey + "\"");
        }
      } else if (key == "launch") {
        const auto text = kv.second.IsScalar() ? kv.second.as<std::string>() : std::string();
        auto mode = ParseLaunchMode(text);
        if (!mode)
          return YamlKeyError(path, kv.second,
                              at + ".launch must be one of auto, per_slot, per_node, got \"" + text + "\"");
        pool.launch = *mode;
      } else if (key == "container_runtime") {
        pool.container_runtime = kv.second.IsScalar() ? kv.second.as<std::string>() : std::string();
        if (pool.container_runtime != "podman" && pool.container_runtime != "docker" &&
            pool.container_runtime != "apptainer" && pool.container_runtime != "singularity")
          return YamlKeyError(
              path, kv.second,
              at + ".container_runtime must be one of podman, docker, apptainer, singularity, got \"" +
                  pool.container_runtime + "\"");
      } else if (key == "zero_slot_tasks") {
        if (!kv.second.IsScalar() || (kv.second.Scalar() != "true" && kv.second.Scalar() != "false"))
          return YamlKeyError(path, kv.second, at + ".zero_slot_tasks must be true or false");
        pool.zero_slot_tasks = kv.second.Scalar() == "true";
        zero_slot_tasks = kv.second;
      } else if (key == "resource_manager") {
        if (Status s = ParseResourceManager(path, kv.second, at, slurm); !s.ok()) return s;
      } else if (key == "allowed_users") {
        if (!kv.second.IsSequence())
          return YamlKeyError(path, kv.second, at + ".allowed_users must be a list of user names");
        for (const auto& u : kv.second) {
          if (!u.IsScalar()) return YamlKeyError(path, u, at + ".allowed_users must be a list of user names");
          pool.allowed_users.push_back(u.as<std::string>());
        }
      } else {
        return YamlKeyError(path, kv.first, "unknown key \"" + at + "." + key + "\"");
      }
    }
    if (pool.name.empty()) return YamlKeyError(path, p, at + ".name is required");
    if (!names.insert(pool.name).second)
      return YamlKeyError(path, p, at + ".name \"" + pool.name + "\" is taken");
    if (pool.scheduler != "priority" && pool.scheduler != "fair_share")
      return YamlKeyError(
          path, p, at + ".scheduler.type must be priority or fair_share, got \"" + pool.scheduler + "\"");
    if (pool.fitting_policy != "best" && pool.fitting_policy != "worst")
      return YamlKeyError(
          path, p,
          at + ".scheduler.fitting_policy must be best or worst, got \"" + pool.fitting_policy + "\"");
    if (slurm) {
      slurm->pool = pool.name;
      if (pool.zero_slot_tasks)
        return YamlKeyError(path, zero_slot_tasks,
                            at + ".zero_slot_tasks: a Slurm pool runs no task of 0 slots (Slurm gives "
                                 "every job at least one CPU of a node); remove it or use a pool of agents");
      // One runtime for the pool, declared in either place: the nodes' for
      // the job agents, the pool's for the scheduler and the starts.
      if (!pool.container_runtime.empty() && !slurm->container_runtime.empty() &&
          pool.container_runtime != slurm->container_runtime)
        return YamlKeyError(path, p,
                            at + ".container_runtime (" + pool.container_runtime + ") and " + at +
                                ".resource_manager.container_runtime (" + slurm->container_runtime +
                                ") disagree: give one");
      if (slurm->container_runtime.empty()) slurm->container_runtime = pool.container_runtime;
      pool.container_runtime = slurm->container_runtime;
      slurm_pools.push_back(std::move(*slurm));
    }
    pools.push_back(std::move(pool));
  }
  return pools;
}

// tls: {cert_file, key_file}
Result<MasterTlsConfig> ParseTls(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap()) return YamlKeyError(path, node, "tls must be a map with cert_file and key_file");
  MasterTlsConfig tls;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (key == "cert_file")
      tls.cert_file = kv.second.as<std::string>();
    else if (key == "key_file")
      tls.key_file = kv.second.as<std::string>();
    else
      return YamlKeyError(path, kv.first, "unknown key \"tls." + key + "\"");
  }
  return tls;
}

// proxy: {listen, external_url, idle_timeout_ms, max_connections_per_user}
Result<ProxySettings> ParseProxy(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap())
    return YamlKeyError(path, node,
                        "proxy must be a map with listen, external_url, idle_timeout_ms, "
                        "max_connections_per_user");
  ProxySettings p;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    try {
      if (key == "listen")
        p.listen = kv.second.IsNull() ? std::string() : kv.second.as<std::string>();
      else if (key == "external_url")
        p.external_url = kv.second.as<std::string>();
      else if (key == "idle_timeout_ms")
        p.idle_timeout_ms = kv.second.as<int64_t>();
      else if (key == "max_connections_per_user")
        p.max_connections_per_user = kv.second.as<int64_t>();
      else
        return YamlKeyError(path, kv.first, "unknown key \"proxy." + key + "\"");
    } catch (const YAML::Exception&) {
      return YamlKeyError(path, kv.second, "proxy." + key + " has the wrong type");
    }
    if (key == "listen" && !p.listen.empty() && p.listen.rfind(':') == std::string::npos)
      return YamlKeyError(path, kv.second, "proxy.listen must be HOST:PORT, got \"" + p.listen + "\"");
    if (key == "external_url" && !p.external_url.starts_with("http://") &&
        !p.external_url.starts_with("https://"))
      return YamlKeyError(
          path, kv.second,
          "proxy.external_url must start with http:// or https://, got \"" + p.external_url + "\"");
    if (key == "idle_timeout_ms" && p.idle_timeout_ms < 1000)
      return YamlKeyError(path, kv.second, "proxy.idle_timeout_ms must be at least 1000");
    if (key == "max_connections_per_user" &&
        (p.max_connections_per_user < 1 || p.max_connections_per_user > 100000))
      return YamlKeyError(path, kv.second, "proxy.max_connections_per_user must be from 1 to 100000");
  }
  while (p.external_url.ends_with("/")) p.external_url.pop_back();
  return p;
}

// interactive: {idle_timeout, max_idle_timeout, notebook_look_interval_ms}
Result<InteractiveSettings> ParseInteractive(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap())
    return YamlKeyError(
        path, node,
        "interactive must be a map with idle_timeout, max_idle_timeout, notebook_look_interval_ms");
  InteractiveSettings s;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    try {
      if (key == "idle_timeout" || key == "max_idle_timeout") {
        auto seconds = DurationSeconds(kv.second.as<std::string>());
        if (!seconds || *seconds <= 0)
          return YamlKeyError(path, kv.second,
                              "interactive." + key + " must be a duration such as 30m, 1h or 45s, got \"" +
                                  kv.second.as<std::string>() + "\"");
        (key == "idle_timeout" ? s.idle.default_s : s.idle.max_s) = *seconds;
      } else if (key == "notebook_look_interval_ms") {
        s.notebook_look_interval_ms = kv.second.as<int64_t>();
        if (s.notebook_look_interval_ms < 100 || s.notebook_look_interval_ms > 3600000)
          return YamlKeyError(path, kv.second,
                              "interactive.notebook_look_interval_ms must be from 100 to 3600000");
      } else {
        return YamlKeyError(path, kv.first, "unknown key \"interactive." + key + "\"");
      }
    } catch (const YAML::Exception&) {
      return YamlKeyError(path, kv.second, "interactive." + key + " has the wrong type");
    }
  }
  if (s.idle.default_s && s.idle.max_s && *s.idle.default_s > *s.idle.max_s)
    return YamlKeyError(path, node,
                        "interactive.idle_timeout must not be longer than interactive.max_idle_timeout");
  return s;
}

// retention: {interval_minutes, log_retention_days, metrics_full_resolution_days, metrics_max_points}
Result<std::vector<std::string>> ParseCheckpointStorage(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap()) return YamlKeyError(path, node, "checkpoint_storage must be a map with allowed_roots");
  std::vector<std::string> roots;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (key != "allowed_roots")
      return YamlKeyError(path, kv.first, "unknown key \"checkpoint_storage." + key + "\"");
    if (!kv.second.IsSequence())
      return YamlKeyError(path, kv.second,
                          "checkpoint_storage.allowed_roots must be a list of absolute folders");
    for (const auto& root : kv.second) {
      const std::string text = root.IsScalar() ? root.as<std::string>() : "";
      if (text.empty() || text.front() != '/')
        return YamlKeyError(
            path, root, "checkpoint_storage.allowed_roots must hold absolute folders, got \"" + text + "\"");
      for (const auto& part : std::filesystem::path(text))
        if (part == "..")
          return YamlKeyError(
              path, root, "checkpoint_storage.allowed_roots must not contain \"..\", got \"" + text + "\"");
      roots.push_back(text);
    }
  }
  return roots;
}

Result<RetentionOptions> ParseRetention(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap()) return YamlKeyError(path, node, "retention must be a map");
  RetentionOptions r;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    try {
      if (key == "interval_minutes")
        r.interval_minutes = kv.second.as<int64_t>();
      else if (key == "log_retention_days")
        r.log_retention_days = kv.second.as<int64_t>();
      else if (key == "metrics_full_resolution_days")
        r.metrics_full_resolution_days = kv.second.as<int64_t>();
      else if (key == "metrics_max_points")
        r.metrics_max_points = kv.second.as<int64_t>();
      else
        return YamlKeyError(path, kv.first, "unknown key \"retention." + key + "\"");
    } catch (const YAML::Exception&) {
      return YamlKeyError(path, kv.second, "retention." + key + " must be an integer");
    }
  }
  return r;
}

}  // namespace

Result<MasterConfig> MasterConfig::FromYamlFile(const std::string& path) {
  MasterConfig c;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  if (root.IsNull()) return c;
  if (!root.IsMap()) return InvalidArgument(path + ": the top level must be a map");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    try {
      if (key == "listen")
        c.listen = v.as<std::string>();
      else if (key == "data_dir")
        c.data_dir = v.as<std::string>();
      else if (key == "db")
        c.db = v.as<std::string>();
      else if (key == "webui_dir")
        c.webui_dir = v.as<std::string>();
      else if (key == "cluster_token_file")
        c.cluster_token_file = v.as<std::string>();
      else if (key == "admin_password_file")
        c.admin_password_file = v.as<std::string>();
      else if (key == "session_ttl_hours")
        c.session_ttl_hours = v.as<int64_t>();
      else if (key == "log_level")
        c.log_level = v.as<std::string>();
      else if (key == "log_format")
        c.log_format = v.as<std::string>();
      else if (key == "heartbeat_interval_ms")
        c.heartbeat_interval_ms = v.as<int64_t>();
      else if (key == "heartbeat_timeout_ms")
        c.heartbeat_timeout_ms = v.as<int64_t>();
      else if (key == "reconnect_window_ms")
        c.reconnect_window_ms = v.as<int64_t>();
      else if (key == "checkpoint_root")
        c.checkpoint_root = v.as<std::string>();
      else if (key == "checkpoint_storage") {
        auto roots = ParseCheckpointStorage(path, v);
        if (!roots.ok()) return roots.status();
        c.checkpoint_allowed_roots = std::move(roots).value();
      } else if (key == "experiments_team_readable")
        c.experiments_team_readable = v.as<bool>();
      else if (key == "max_streamed_answers")
        c.max_streamed_answers = v.as<int64_t>();
      else if (key == "resource_pools") {
        c.slurm_pools.clear();
        auto pools = ParsePools(path, v, c.slurm_pools);
        if (!pools.ok()) return pools.status();
        c.resource_pools = std::move(pools).value();
      } else if (key == "kill_grace_ms")
        c.kill_grace_ms = v.as<int64_t>();
      else if (key == "max_model_bytes")
        c.max_model_bytes = v.as<int64_t>();
      else if (key == "request_timeout_ms")
        c.request_timeout_ms = v.as<int64_t>();
      else if (key == "max_connections")
        c.max_connections = v.as<int64_t>();
      else if (key == "max_connections_per_address")
        c.max_connections_per_address = v.as<int64_t>();
      else if (key == "connection_cap_exempt_addresses") {
        if (!v.IsSequence())
          return YamlKeyError(
              path, v, "connection_cap_exempt_addresses must be a list of IP addresses or CIDR ranges");
        c.connection_cap_exempt_addresses.clear();
        for (const auto& entry : v) {
          const std::string text = entry.IsScalar() ? entry.as<std::string>() : "";
          if (auto ranges = AddressRanges::Parse({text}); !ranges.ok())
            return YamlKeyError(path, entry, "connection_cap_exempt_addresses: " + ranges.status().message());
          c.connection_cap_exempt_addresses.push_back(text);
        }
      } else if (key == "max_queued_sign_ins")
        c.max_queued_sign_ins = v.as<int64_t>();
      else if (key == "max_failed_logins_per_user")
        c.max_failed_logins_per_user = v.as<int64_t>();
      else if (key == "log_bytes_per_second")
        c.log_bytes_per_second = v.as<double>();
      else if (key == "log_burst_bytes")
        c.log_burst_bytes = v.as<double>();
      else if (key == "max_log_page_bytes")
        c.max_log_page_bytes = v.as<int64_t>();
      else if (key == "max_header_bytes")
        c.max_header_bytes = v.as<int64_t>();
      else if (key == "log_lines_per_second")
        c.log_lines_per_second = v.as<double>();
      else if (key == "log_burst_lines")
        c.log_burst_lines = v.as<double>();
      else if (key == "max_log_line_bytes")
        c.max_log_line_bytes = v.as<int64_t>();
      else if (key == "threads")
        c.threads = v.as<int>();
      else if (key == "agent_threads")
        c.agent_threads = v.as<int>();
      else if (key == "agent_threads_nice")
        c.agent_threads_nice = v.as<int>();
      else if (key == "thread_slice_us")
        c.thread_slice_us = v.as<int>();
      else if (key == "tls") {
        auto tls = ParseTls(path, v);
        if (!tls.ok()) return tls.status();
        c.tls = std::move(tls).value();
      } else if (key == "proxy") {
        auto proxy = ParseProxy(path, v);
        if (!proxy.ok()) return proxy.status();
        c.proxy = std::move(proxy).value();
      } else if (key == "interactive") {
        auto interactive = ParseInteractive(path, v);
        if (!interactive.ok()) return interactive.status();
        c.interactive = *interactive;
      } else if (key == "webhooks") {
        auto webhooks = ParseWebhookSettings(path, v);
        if (!webhooks.ok()) return webhooks.status();
        c.webhooks = *std::move(webhooks);
      } else if (key == "retention") {
        auto retention = ParseRetention(path, v);
        if (!retention.ok()) return retention.status();
        c.retention = *retention;
      } else
        return YamlKeyError(path, kv.first, "unknown key \"" + key + "\"");
    } catch (const YAML::Exception&) {
      return YamlKeyError(path, v, key + " has the wrong type");
    }
  }
  return c;
}

Status MasterConfig::Finalize(const std::string& argv0) {
  namespace fs = std::filesystem;
  if (data_dir.empty()) {
    const char* home = std::getenv("HOME");
    data_dir = std::string(home ? home : ".") + "/.ringmaster";
  }
  if (db.empty()) db = data_dir + "/ringmaster.db";
  if (cluster_token_file.empty()) cluster_token_file = data_dir + "/cluster-token";
  if (checkpoint_root.empty()) checkpoint_root = data_dir + "/checkpoints";
  {
    std::error_code ec;
    auto abs = fs::absolute(checkpoint_root, ec);
    if (!ec) checkpoint_root = abs.lexically_normal().string();
  }
  if (webui_dir.empty()) {
    std::error_code ec;
    auto exe = fs::canonical(fs::path(argv0), ec);
    // Beside bin/ in a build tree; under share/ once installed.
    if (!ec) {
      const auto prefix = exe.parent_path().parent_path();
      webui_dir = (prefix / "webui").string();
      if (!fs::exists(webui_dir) && fs::exists(prefix / "share/ringmaster/webui"))
        webui_dir = (prefix / "share/ringmaster/webui").string();
    }
  }
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (!kLevels.count(log_level))
    return InvalidArgument("log_level must be one of trace, debug, info, warn, error");
  if (log_format != "text" && log_format != "json")
    return InvalidArgument("log_format must be text or json, got \"" + log_format + "\"");
  if (listen.rfind(':') == std::string::npos)
    return InvalidArgument("listen must be HOST:PORT, got \"" + listen + "\"");
  // A free port by default: a fixed one next to `listen` could be taken by
  // anything on the host; each link names the port it picked.
  if (proxy.listen.empty()) proxy.listen = listen.substr(0, listen.rfind(':')) + ":0";
  {
    const auto colon = proxy.listen.rfind(':');
    const std::string port = colon == std::string::npos ? "" : proxy.listen.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) > 65535)
      return InvalidArgument("proxy.listen must be HOST:PORT with a port from 0 to 65535, got \"" +
                             proxy.listen + "\"");
  }
  if (heartbeat_interval_ms <= 0) return InvalidArgument("heartbeat_interval_ms must be positive");
  if (heartbeat_timeout_ms <= heartbeat_interval_ms)
    return InvalidArgument("heartbeat_timeout_ms must be larger than heartbeat_interval_ms");
  if (reconnect_window_ms < 0) return InvalidArgument("reconnect_window_ms must not be negative");
  if (kill_grace_ms < 0) return InvalidArgument("kill_grace_ms must not be negative");
  if (max_model_bytes <= 0) return InvalidArgument("max_model_bytes must be positive");
  if (request_timeout_ms <= 0) return InvalidArgument("request_timeout_ms must be positive");
  if (max_connections < 1 || max_connections > 1000000)
    return InvalidArgument("max_connections must be from 1 to 1000000");
  if (max_connections_per_address < 1 || max_connections_per_address > 1000000)
    return InvalidArgument("max_connections_per_address must be from 1 to 1000000");
  if (max_queued_sign_ins < 1 || max_queued_sign_ins > 100000)
    return InvalidArgument("max_queued_sign_ins must be from 1 to 100000");
  if (max_failed_logins_per_user < 1 || max_failed_logins_per_user > 1000000)
    return InvalidArgument("max_failed_logins_per_user must be from 1 to 1000000");
  if (!(log_bytes_per_second >= 1024)) return InvalidArgument("log_bytes_per_second must be at least 1024");
  if (!(log_burst_bytes >= 1024)) return InvalidArgument("log_burst_bytes must be at least 1024");
  if (max_log_page_bytes < 4096 || max_log_page_bytes > (256 << 20))
    return InvalidArgument("max_log_page_bytes must be from 4096 to 268435456");
  if (max_header_bytes < 1024 || max_header_bytes > (16 << 20))
    return InvalidArgument("max_header_bytes must be from 1024 to 16777216");
  if (!(log_lines_per_second >= 1)) return InvalidArgument("log_lines_per_second must be at least 1");
  if (!(log_burst_lines >= 1)) return InvalidArgument("log_burst_lines must be at least 1");
  if (max_log_line_bytes < 80 || max_log_line_bytes > (16 << 20))
    return InvalidArgument("max_log_line_bytes must be from 80 to 16777216");
  if (max_streamed_answers < 1 || max_streamed_answers > 10000)
    return InvalidArgument("max_streamed_answers must be from 1 to 10000");
  if (threads < 1 || threads > 64) return InvalidArgument("threads must be from 1 to 64");
  if (agent_threads < 0 || agent_threads > 64) return InvalidArgument("agent_threads must be from 0 to 64");
  if (agent_threads_nice < 0 || agent_threads_nice > 19)
    return InvalidArgument("agent_threads_nice must be from 0 to 19");
  if (thread_slice_us != 0 && (thread_slice_us < 100 || thread_slice_us > 100000))
    return InvalidArgument("thread_slice_us must be 0 (the kernel's) or from 100 to 100000");
  if (tls.enabled() && tls.cert_file.empty())
    return InvalidArgument("tls.key_file (--tls-key) is set but tls.cert_file (--tls-cert) is not");
  if (tls.enabled() && tls.key_file.empty())
    return InvalidArgument("tls.cert_file (--tls-cert) is set but tls.key_file (--tls-key) is not");
  if (tls.enabled())
    if (Status s = CheckTlsFiles(tls.cert_file, tls.key_file); !s.ok()) return s;
  if (session_ttl_hours < 1 || session_ttl_hours > 24 * 366)
    return InvalidArgument("session_ttl_hours must be from 1 to 8784");
  if (retention.interval_minutes < 0)
    return InvalidArgument("retention.interval_minutes must be 0 (only when asked) or more");
  if (retention.log_retention_days < -1)
    return InvalidArgument("retention.log_retention_days must be a number of days >= 0, or -1 to keep logs");
  if (retention.metrics_full_resolution_days < -1)
    return InvalidArgument(
        "retention.metrics_full_resolution_days must be a number of days >= 0, or -1 to keep every report");
  if (retention.metrics_max_points < 2)
    return InvalidArgument("retention.metrics_max_points must be at least 2");
  return Status::Ok();
}

}  // namespace ring
