// ringmaster: parses flags into MasterConfig and runs the Master.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/log_format.h"
#include "common/thread_role.h"
#include "master/master.h"

int main(int argc, char** argv) {
  CLI::App app{"ringmaster: the Ringmaster cluster training master"};
  std::string config_file, listen, db, data_dir, port_file, webui_dir, log_level, cluster_token_file;
  int64_t heartbeat_timeout_ms = 0;
  int64_t reconnect_window_ms = -1;
  app.add_option("--config", config_file, "master.yaml with settings (flags override it)");
  app.add_option("--listen", listen, "HOST:PORT to listen on; port 0 picks a free one");
  app.add_option("--db", db, "SQLite database file (default <data-dir>/ringmaster.db)");
  app.add_option("--data-dir", data_dir, "directory for the master's data (default ~/.ringmaster)");
  app.add_option("--port-file", port_file, "write the bound port to this file");
  app.add_option("--webui-dir", webui_dir, "directory of the built web UI");
  app.add_option("--cluster-token-file", cluster_token_file,
                 "agents must present the token in this file, made (0600) at first start "
                 "(default <data-dir>/cluster-token)");
  std::string admin_password_file;
  app.add_option("--admin-password-file", admin_password_file,
                 "at first start, the user admin gets the password in this file (default: a random one, "
                 "printed once in the log)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error");
  std::string log_format;
  app.add_option("--log-format", log_format, "text (default), or json: one JSON object per line")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--heartbeat-timeout-ms", heartbeat_timeout_ms,
                 "close an agent's connection after this much silence");
  app.add_option("--reconnect-window-ms", reconnect_window_ms,
                 "a disconnected agent is lost (its trials move elsewhere) after this");
  std::string tls_cert, tls_key;
  app.add_option("--tls-cert", tls_cert,
                 "serve HTTPS only, with this PEM certificate (then intermediates); needs --tls-key");
  app.add_option("--tls-key", tls_key, "the PEM private key of --tls-cert (unencrypted)");
  CLI11_PARSE(app, argc, argv);

  ring::MasterConfig config;
  if (!config_file.empty()) {
    auto loaded = ring::MasterConfig::FromYamlFile(config_file);
    if (!loaded.ok()) {
      fprintf(stderr, "ringmaster: %s\n", loaded.status().message().c_str());
      return 2;
    }
    config = std::move(loaded).value();
  }
  if (!listen.empty()) config.listen = listen;
  if (!db.empty()) config.db = db;
  if (!data_dir.empty()) config.data_dir = data_dir;
  if (!port_file.empty()) config.port_file = port_file;
  if (!webui_dir.empty()) config.webui_dir = webui_dir;
  if (!cluster_token_file.empty()) config.cluster_token_file = cluster_token_file;
  if (!log_level.empty()) config.log_level = log_level;
  if (!log_format.empty()) config.log_format = log_format;
  if (!admin_password_file.empty()) config.admin_password_file = admin_password_file;
  if (heartbeat_timeout_ms > 0) config.heartbeat_timeout_ms = heartbeat_timeout_ms;
  if (reconnect_window_ms >= 0) config.reconnect_window_ms = reconnect_window_ms;
  if (!tls_cert.empty()) config.tls.cert_file = tls_cert;
  if (!tls_key.empty()) config.tls.key_file = tls_key;
  if (auto s = config.Finalize(argv[0]); !s.ok()) {
    fprintf(stderr, "ringmaster: %s\n", s.message().c_str());
    return 2;
  }
  if (auto s = ring::UseLogFormat("ringmaster", config.log_format); !s.ok()) {
    fprintf(stderr, "ringmaster: %s\n", s.message().c_str());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));

  // Every thread the master starts inherits this one's time slice: short,
  // so that work for users preempts the agent threads (which go back to the
  // kernel's slice) as soon as it wakes.
  if (config.thread_slice_us > 0 && !ring::SetThreadSlice(config.thread_slice_us))
    spdlog::debug("[master] the kernel keeps its own time slices");
  ring::Master master(std::move(config));
  if (auto s = master.Run(); !s.ok()) {
    spdlog::critical("[master] cannot start: {}", s.message());
    return 1;
  }
  return 0;
}
