#include "master/master.h"

#include "master/auth/cluster_token.h"

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <thread>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/thread_role.h"
#include "master/api/routes.h"
#include "master/api/shells_api.h"
#include "master/api/work_gate.h"
#include "master/auth/accounts.h"
#include "master/auth/terminal_tickets.h"
#include "master/http/agent_ws_session.h"
#include "master/http/http_server.h"
#include "master/http/router.h"
#include "master/http/stream_slots.h"
#include "master/interactive/jupyter_probe.h"
#include "master/interactive/notebook_watch.h"
#include "master/interactive/terminal_relay.h"
#include "master/lifecycle/lifecycle.h"
#include "master/maintenance/retention.h"
#include "master/notifications/webhook_dispatcher.h"
#include "master/notifications/webhook_sender.h"
#include "master/observability/master_metrics.h"
#include "master/proxy/proxy_access.h"
#include "master/proxy/proxy_server.h"
#include "master/proxy/task_proxy.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/rm/routing_rm.h"
#include "master/rm/slurmrm/slurm_rest_commands.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"

namespace ring {

namespace net = boost::asio;

struct Master::Parts {
  // First, so it is destroyed last: everything below may own sockets and
  // timers of it (the agents' registry holds their WebSocket sessions).
  net::io_context ioc;
  // The agents' WebSocket connections (agent_threads), for the same
  // reason as early: the registry holds their sessions.
  net::io_context agent_ioc;
  MasterMetrics metrics;  // before the store and lifecycle, which report to it
  // Shells' terminals: each attached client's session, relayed to the agent
  // that runs the shell (terminal_relay.h). First, so that it outlives the
  // agents' manager and the WebSocket sessions that call it.
  std::unique_ptr<TerminalRelay> terminals;
  std::unique_ptr<SqliteStore> store;
  std::unique_ptr<AgentEnrolments> enrolments;  // agents' credentials and the cluster token
  AgentRm* agent_rm = nullptr;                  // owned by the lifecycle
  RoutingRm* routing = nullptr;                 // owned by the lifecycle; set when there are Slurm pools
  // Webhooks: the sender's threads post deliveries; the dispatcher, which
  // the lifecycle calls, writes them. Before the lifecycle, which calls it.
  std::unique_ptr<WebhookSender> webhook_sender;
  std::unique_ptr<WebhookDispatcher> webhooks;
  std::unique_ptr<Lifecycle> lifecycle;
  // The lifecycle's own thread: every lifecycle event runs there, one at a
  // time. After the lifecycle, so it is joined before the lifecycle goes.
  net::thread_pool lifecycle_thread{1};
  std::unique_ptr<Accounts> accounts;
  // One-time tickets of browsers' terminals: issued by the REST route,
  // redeemed by the terminal's admission (both on io threads).
  TerminalTickets terminal_tickets;
  std::unique_ptr<Retention> retention;      // before its thread, which is joined first
  net::thread_pool slow_work{1};             // password hashing
  std::unique_ptr<WorkGate> slow_work_gate;  // bounds what waits for slow_work
  net::thread_pool maintenance{1};           // retention passes
  net::thread_pool file_work{2};             // backups, checking a download's files before it starts
  net::thread_pool webhook_work{1};          // webhook URL checks (DNS) and tests
  net::thread_pool list_work{1};             // the agents list (GET /api/v1/agents)
  std::unique_ptr<StreamSlots> streams;      // large answers at once (max_streamed_answers)
  // Metric reports: a caller waits here for its group commit, so the reports
  // of up to this many requests share one.
  net::thread_pool metric_writes{16};
  Router router;
  std::unique_ptr<ApiContext> api;
  std::unique_ptr<AgentWsAcceptor> agents;
  // Users' WebSockets to shells' terminals (after the server's parts).
  std::unique_ptr<TerminalWsAcceptor> terminal_sockets;
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<TaskProxy> proxy;  // links, announced services, activity (read by routes and proxy_server)
  std::unique_ptr<ProxyServer> proxy_server;
  // Whether running notebooks are idle: looks at their Jupyter servers on a
  // thread of their own (they wait on the network), after what they read.
  std::unique_ptr<NotebookWatch> notebooks;
  std::chrono::milliseconds notebook_look_interval{10000};
  net::thread_pool notebook_looks{1};
  net::steady_timer notebook_timer{ioc};
  net::steady_timer tick{ioc};
  net::steady_timer retention_timer{ioc};

  void ScheduleTick() {
    tick.expires_after(std::chrono::milliseconds(200));
    tick.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      net::post(lifecycle_thread, [this] {
        const auto now = std::chrono::steady_clock::now();
        lifecycle->Tick(now);
        lifecycle->tasks().EndIdle(now, [this, now](TaskKind kind, const std::string& allocation) {
          return kind == TaskKind::kNotebook ? notebooks->IdleSince(allocation)
                                             : terminals->IdleSince(allocation, now);
        });
      });
      ScheduleTick();
    });
  }

  // A look at every running notebook's Jupyter each interval: the targets
  // are read on the lifecycle's thread, the servers asked on notebook_looks;
  // the next look is timed from the end of the last.
  void ScheduleNotebookLook() {
    notebook_timer.expires_after(notebook_look_interval);
    notebook_timer.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      net::post(lifecycle_thread, [this] {
        std::vector<NotebookWatch::Target> targets;
        for (const auto& n : lifecycle->tasks().RunningNotebooks()) {
          NotebookWatch::Target t{n.allocation_id, n.idle_type,
                                  std::chrono::seconds(n.idle_timeout_s.value_or(0))};
          if (proxy) {
            if (auto service = proxy->services().Lookup(n.task_id)) {
              const bool v6 = service->host.find(':') != std::string::npos;
              t.base_url = "http://" + (v6 ? "[" + service->host + "]" : service->host) + ":" +
                           std::to_string(service->port) + "/proxy/" + std::to_string(n.task_id) + "/";
              t.token = service->token;
            }
            t.proxied = proxy->activity().Last(n.task_id);
          }
          targets.push_back(std::move(t));
        }
        net::post(notebook_looks, [this, targets = std::move(targets)] {
          notebooks->Look(targets, std::chrono::steady_clock::now());
          net::post(ioc, [this] { ScheduleNotebookLook(); });
        });
      });
    });
  }

  // A retention pass every interval, on the maintenance thread; the next one
  // is timed from the end of the last.
  void ScheduleRetention() {
    const auto minutes = retention->options().interval_minutes;
    if (minutes <= 0) return;
    retention_timer.expires_after(std::chrono::minutes(minutes));
    retention_timer.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      net::post(maintenance, [this] {
        auto report = retention->Run(std::chrono::system_clock::now());
        if (!report.ok())
          spdlog::error("[master] retention pass failed: {}", report.status().message());
        else
          spdlog::info("[master] retention pass: {}", report->ToJson().dump());
        net::post(ioc, [this] { ScheduleRetention(); });
      });
    });
  }
};

Master::Master(MasterConfig config) : config_(std::move(config)), parts_(std::make_unique<Parts>()) {}
Master::~Master() {
  SetSqliteWriteObserver(nullptr);  // it reports to parts_->metrics
}

namespace {

Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out) return Internal("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Internal("cannot rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Status Master::Run() {
  auto& p = *parts_;
  std::error_code ec;
  // The data folder holds the database, the cluster token and the admin's
  // first password: made 0700 whatever the umask.
  const bool created_dir = std::filesystem::create_directories(config_.data_dir, ec);
  if (ec) return Internal("cannot create data dir " + config_.data_dir + ": " + ec.message());
  if (created_dir) {
    std::filesystem::permissions(config_.data_dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    if (ec) return Internal("cannot make data dir " + config_.data_dir + " private: " + ec.message());
  }

  auto cluster_token = LoadOrCreateClusterToken(config_.cluster_token_file);
  if (!cluster_token.ok()) return cluster_token.status();

  SetSqliteWriteObserver([&p](double seconds) { p.metrics.ObserveStoreWrite(seconds); });
  auto store = SqliteStore::Open(config_.db);
  if (!store.ok()) return store.status();
  p.store = std::move(store).value();
  p.enrolments =
      std::make_unique<AgentEnrolments>(*p.store, config_.cluster_token_file, *cluster_token,
                                        [&p](AgentRefusal why) { p.metrics.CountAgentRefusal(why); });
  if (Status s = p.enrolments->Load(); !s.ok()) return s;

  // Webhooks: deliveries a stopped master left are sent again from now on.
  auto allow_list = UrlAllowList::Make(config_.webhooks.allowed_urls);
  if (!allow_list.ok()) return allow_list.status();
  p.webhook_sender = std::make_unique<WebhookSender>(*p.store, config_.webhooks, *std::move(allow_list));
  p.webhooks = std::make_unique<WebhookDispatcher>(*p.store, *p.webhook_sender);
  if (Status s = p.webhooks->Reload(); !s.ok()) return s;
  if (Status s = p.webhook_sender->Start(); !s.ok()) return s;

  // The keys of Slurm pools that submit through slurmrestd, read (and
  // checked private) before anything is started.
  std::map<std::string, std::string> slurm_jwt_keys;
  for (const auto& pool : config_.slurm_pools)
    if (pool.uses_rest()) {
      auto key = ReadSlurmJwtKey(pool.rest.jwt_key_file);
      if (!key.ok()) return InvalidArgument("pool " + pool.pool + ": " + key.status().message());
      slurm_jwt_keys[pool.pool] = *key;
    }

  AgentRmOptions agent_options;
  agent_options.heartbeat_interval = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  agent_options.heartbeat_timeout = std::chrono::milliseconds(config_.heartbeat_timeout_ms);
  agent_options.reconnect_window = std::chrono::milliseconds(config_.reconnect_window_ms);
  agent_options.kill_grace = std::chrono::milliseconds(config_.kill_grace_ms);
  agent_options.enrolments = p.enrolments.get();
  agent_options.count_refusal = [&p](AgentRefusal why) { p.metrics.CountAgentRefusal(why); };
  // Our agents, or a Slurm job's agents when the master has Slurm pools.
  p.terminals = std::make_unique<TerminalRelay>([&p](const std::string& agent, const proto::Message& m) {
    if (p.routing) return p.routing->SendToAgent(agent, m);
    return p.agent_rm ? p.agent_rm->SendToAgent(agent, m) : Unavailable("no agents yet");
  });
  p.notebooks = std::make_unique<NotebookWatch>(
      [](const std::string& base_url, const std::string& token) { return ProbeJupyter(base_url, token); });
  p.notebook_look_interval = std::chrono::milliseconds(config_.interactive.notebook_look_interval_ms);
  agent_options.terminal_message = [&p](const std::string& agent, const proto::Message& m) {
    return p.terminals->FromAgent(agent, m);
  };
  agent_options.terminals_gone = [&p](const std::string& agent) {
    p.terminals->AgentGone(agent, "the agent running the shell disconnected; open it again once it is back");
  };
  LifecycleOptions options;
  options.heartbeat_timeout = agent_options.heartbeat_timeout;
  options.max_model_bytes = static_cast<uint64_t>(config_.max_model_bytes);
  options.log_limits = {config_.log_lines_per_second, config_.log_burst_lines,
                        static_cast<size_t>(config_.max_log_line_bytes), config_.log_bytes_per_second,
                        config_.log_burst_bytes};
  options.reconnect_window = std::chrono::milliseconds(config_.reconnect_window_ms);
  options.checkpoint_root = config_.checkpoint_root;
  options.checkpoint_allowed_roots = config_.checkpoint_allowed_roots;
  options.pools = config_.resource_pools;
  options.idle_limits = config_.interactive.idle;
  options.own_dirs = {config_.data_dir, std::filesystem::path(config_.db).parent_path().string(),
                      std::filesystem::path(config_.cluster_token_file).parent_path().string()};
  options.on_scheduler_pass = [&p](const std::string& pool, double seconds) {
    p.metrics.ObserveSchedulerPass(pool, seconds);
  };
  options.on_trial_restart = [&p] { p.metrics.CountTrialRestart(); };
  options.on_allocation_ended = [&p](const std::string& allocation_id, int64_t task_id) {
    p.terminals->Forget(allocation_id);
    if (p.proxy) {
      p.proxy->services().Forget(allocation_id);
      p.proxy->activity().Forget(task_id);
    }
  };
  options.on_experiment_state = [&p](const ExperimentRecord& exp, RunState from, const ExperimentConfig* c) {
    p.webhooks->OnExperimentState(exp, from, c);
  };
  options.on_trial_lines = [&p](int64_t experiment_id, const std::string& node,
                                const std::vector<LogRecord>& lines) {
    p.webhooks->OnTrialLines(experiment_id, node, lines);
  };
  auto make_rm = [this, &p, agent_options,
                  &slurm_jwt_keys](RmEvents& events) -> std::unique_ptr<ResourceManager> {
    auto rm = std::make_unique<AgentRm>(*p.store, agent_options, events);
    p.agent_rm = rm.get();
    if (config_.slurm_pools.empty()) return rm;
    // Some pools are Slurm partitions: each gets its manager, and the
    // lifecycle talks to all of them through one that routes by pool.
    std::vector<std::unique_ptr<SlurmRm>> slurm;
    for (const auto& pool : config_.slurm_pools) {
      SlurmRmSettings settings;
      settings.master_url = pool.master_url;
      settings.ca_file = pool.agent_ca_file;
      settings.job_dir = pool.job_dir.empty() ? config_.data_dir + "/slurm/" + pool.pool : pool.job_dir;
      settings.kill_grace = agent_options.kill_grace;
      settings.heartbeat_interval = agent_options.heartbeat_interval;
      settings.heartbeat_timeout = agent_options.heartbeat_timeout;
      settings.count_refusal = agent_options.count_refusal;
      settings.store = p.store.get();
      settings.terminal_message = agent_options.terminal_message;
      settings.terminals_gone = [&p](const std::string& agent) {
        p.terminals->AgentGone(agent, "the agent of the Slurm job running the shell disconnected");
      };
      std::unique_ptr<SlurmCommands> commands;
      if (pool.uses_rest())
        commands = std::make_unique<RestSlurmCommands>(pool.rest, slurm_jwt_keys.at(pool.pool));
      else if (!pool.submit_helper.empty())
        commands = std::make_unique<HelperSlurmCommands>(pool.submit_helper, pool.submit_helper_config);
      else
        commands = std::make_unique<ProcessSlurmCommands>();
      slurm.push_back(std::make_unique<SlurmRm>(pool, std::move(settings), std::move(commands), events));
    }
    auto routing = std::make_unique<RoutingRm>(std::move(rm), std::move(slurm));
    p.routing = routing.get();
    return routing;
  };
  auto to_lifecycle = [&p](std::function<void()> work) { net::post(p.lifecycle_thread, std::move(work)); };
  p.lifecycle = std::make_unique<Lifecycle>(*p.store, options, make_rm, to_lifecycle);
  // Recovery runs on the lifecycle's thread like every other event.
  std::packaged_task<Status()> recover(
      [&p] { return p.lifecycle->Recover(std::chrono::steady_clock::now()); });
  auto recovered = recover.get_future();
  net::post(p.lifecycle_thread, [&recover] { recover(); });
  if (Status s = recovered.get(); !s.ok()) return s;

  AccountsOptions accounts;
  accounts.session_ttl = std::chrono::hours(config_.session_ttl_hours);
  accounts.max_failed_logins_per_user = static_cast<int>(config_.max_failed_logins_per_user);
  p.accounts = std::make_unique<Accounts>(*p.store, accounts);
  auto made = p.accounts->EnsureAdmin(config_.admin_password_file);
  if (!made.ok()) return made.status();
  if (*made)
    spdlog::warn(
        "[master] created the user admin with the password {} (shown once; sign in with "
        "`ring user login admin` and change it with `ring user change-password`)",
        **made);
  else if (!config_.admin_password_file.empty())
    spdlog::info("[master] the user admin exists (first password from {})", config_.admin_password_file);

  p.api =
      std::make_unique<ApiContext>(ApiContext{*p.store, *p.lifecycle, *p.agent_rm, "0.1.0", p.accounts.get(),
                                              &p.slow_work, config_.db, p.store->schema_version()});
  p.api->lifecycle_thread = &p.lifecycle_thread;
  p.slow_work_gate = std::make_unique<WorkGate>(config_.max_queued_sign_ins, std::chrono::milliseconds(100));
  p.api->slow_work_gate = p.slow_work_gate.get();
  p.api->max_log_page_bytes = static_cast<size_t>(config_.max_log_page_bytes);
  p.api->enrolments = p.enrolments.get();
  p.api->metrics = &p.metrics;
  p.retention = std::make_unique<Retention>(*p.store, config_.retention);
  p.api->retention = p.retention.get();
  p.api->maintenance = &p.maintenance;
  p.api->metric_writes = &p.metric_writes;
  p.api->experiments_team_readable = config_.experiments_team_readable;
  p.streams = std::make_unique<StreamSlots>(config_.max_streamed_answers);
  p.api->streams = p.streams.get();
  p.api->file_work = &p.file_work;
  p.api->list_work = &p.list_work;
  p.proxy = std::make_unique<TaskProxy>(
      config_.proxy,
      [&p](const std::string& allocation_id) { return p.lifecycle->tokens().Live(allocation_id); },
      [&p](const std::string& username, int64_t task_id) {
        return CheckProxyAccess(*p.store, username, task_id);
      });
  p.api->proxy = p.proxy.get();
  p.api->terminal_tickets = &p.terminal_tickets;
  p.api->webhooks = p.webhooks.get();
  p.api->webhook_sender = p.webhook_sender.get();
  p.api->webhook_work = &p.webhook_work;
  RegisterAllRoutes(p.router, *p.api);
  p.router.SetObserver([&p](const std::string& method, const std::string& route, int status, double seconds) {
    p.metrics.ObserveRequest(method, route, status, seconds);
  });
  p.api->routing = p.routing;
  p.agents = std::make_unique<AgentWsAcceptor>(*p.agent_rm, *p.enrolments, to_lifecycle, p.routing,
                                               config_.agent_threads > 0 ? &p.agent_ioc : nullptr);

  HttpServerOptions http;
  const auto colon = config_.listen.rfind(':');
  http.host = config_.listen.substr(0, colon);
  http.port = static_cast<uint16_t>(std::stoi(config_.listen.substr(colon + 1)));
  http.read_timeout = std::chrono::milliseconds(config_.request_timeout_ms);
  http.max_connections = static_cast<uint32_t>(config_.max_connections);
  http.max_connections_per_address = static_cast<uint32_t>(config_.max_connections_per_address);
  {
    auto exempt = AddressRanges::Parse(config_.connection_cap_exempt_addresses);  // checked when loaded
    if (!exempt.ok()) return exempt.status();
    http.connection_cap_exempt = std::move(exempt).value();
  }
  http.header_limit = static_cast<uint32_t>(config_.max_header_bytes);
  http.upload_body_limit = static_cast<uint64_t>(config_.max_model_bytes) * 4 / 3 + (1 << 20);
  http.webui_dir = config_.webui_dir;
  http.tls_cert_file = config_.tls.cert_file;
  http.tls_key_file = config_.tls.key_file;
  p.server = std::make_unique<HttpServer>(p.ioc, http, p.router, *p.agents);
  p.terminal_sockets = std::make_unique<TerminalWsAcceptor>(
      *p.terminals, IsShellTerminalTarget,
      MakeShellTerminalAdmitter(*p.store, *p.accounts, p.terminal_tickets, p.routing));
  p.server->SetTerminals(p.terminal_sockets.get());
  auto port = p.server->Start();
  if (!port.ok()) return port.status();
  if (!config_.port_file.empty())
    if (Status s = WritePortFile(config_.port_file, *port); !s.ok()) return s;
  if (p.routing)
    for (const auto& slurm : p.routing->slurm()) {
      // Job agents reach the master where it listens, unless the pool says otherwise.
      if (slurm->master_url().empty())
        slurm->SetMasterUrl((config_.tls.enabled() ? "https://" : "http://") + http.host + ":" +
                            std::to_string(*port));
      slurm->Start();
      spdlog::info("[master] pool {} runs on Slurm partition {}; its job agents connect to {}", slurm->pool(),
                   slurm->partition(), slurm->master_url());
    }
  {
    ProxyServerOptions proxy;
    const auto proxy_colon = config_.proxy.listen.rfind(':');
    proxy.host = config_.proxy.listen.substr(0, proxy_colon);
    proxy.port = static_cast<uint16_t>(std::stoi(config_.proxy.listen.substr(proxy_colon + 1)));
    proxy.read_timeout = http.read_timeout;
    proxy.idle_timeout = std::chrono::milliseconds(config_.proxy.idle_timeout_ms);
    proxy.header_limit = http.header_limit;
    proxy.max_connections = http.max_connections;
    proxy.max_connections_per_address = http.max_connections_per_address;
    proxy.tls_cert_file = http.tls_cert_file;
    proxy.tls_key_file = http.tls_key_file;
    p.proxy_server = std::make_unique<ProxyServer>(p.ioc, proxy, *p.proxy);
    auto proxy_port = p.proxy_server->Start();
    if (!proxy_port.ok()) return proxy_port.status();
    p.proxy->SetExternalUrl(config_.proxy.external_url.empty()
                                ? std::string(config_.tls.enabled() ? "https://" : "http://") + proxy.host +
                                      ":" + std::to_string(*proxy_port)
                                : config_.proxy.external_url);
    spdlog::info("[master] task proxy listening on {}:{}, reached at {}", proxy.host, *proxy_port,
                 p.proxy->external_url());
  }
  spdlog::info("[master] listening on {}://{}:{} (db {})", config_.tls.enabled() ? "https" : "http",
               http.host, *port, config_.db);
  spdlog::info("[master] agents enrol with the cluster token in {} (ringagent --token-file)",
               config_.cluster_token_file);

  net::signal_set signals(p.ioc, SIGTERM, SIGINT);
  signals.async_wait([&](boost::system::error_code, int sig) {
    spdlog::info("[master] signal {} received, shutting down", sig);
    p.server->Stop();
    if (p.proxy_server) p.proxy_server->Stop();
    p.tick.cancel();
    p.retention_timer.cancel();
    p.notebook_timer.cancel();
    p.ioc.stop();  // then the agent threads, below
  });
  p.ScheduleTick();
  p.ScheduleRetention();
  p.ScheduleNotebookLook();
  // Deletions a stopped master left halfway are finished.
  if (auto deleting = p.store->ListDeletingExperiments(); deleting.ok())
    for (int64_t id : *deleting) {
      spdlog::info("[master] experiment {} was being deleted: finishing", id);
      StartExperimentDeletion(*p.api, id);
    }

  // The one-thread pools' threads by name, for top -H, ps -L and perf (the
  // main thread keeps the program's name, which pgrep and systemd see).
  for (auto [pool, name] :
       {std::pair{&p.lifecycle_thread, "ring-lifecycle"}, std::pair{&p.slow_work, "ring-sign-ins"},
        std::pair{&p.maintenance, "ring-retention"}, std::pair{&p.webhook_work, "ring-hook-work"},
        std::pair{&p.list_work, "ring-agent-list"}})
    net::post(*pool, [name] { SetThreadName(name); });
  std::vector<std::thread> threads;
  // The agents' connections: their own threads, below the users' requests
  // when the master's cores are busy (heartbeats wait, requests do not).
  auto agent_work = net::make_work_guard(p.agent_ioc);
  for (int i = 0; i < config_.agent_threads; ++i)
    threads.emplace_back([&] {
      SetThreadName("ring-agents");
      MarkIoThread();
      if (!LowerThreadPriority(config_.agent_threads_nice))
        spdlog::warn("[master] cannot raise the agent thread's nice value by {}", config_.agent_threads_nice);
      // The kernel's time slice, longer than the other threads' (thread_slice_us).
      SetThreadSlice(0);
      p.agent_ioc.run();
    });
  for (int i = 1; i < config_.threads; ++i)
    threads.emplace_back([&] {
      SetThreadName("ring-io");
      MarkIoThread();
      p.ioc.run();
    });
  MarkIoThread();
  p.ioc.run();
  p.agent_ioc.stop();  // however the io threads ended
  for (auto& t : threads) t.join();
  p.lifecycle_thread.join();
  p.list_work.join();  // its build reads the agents through *p.api
  spdlog::info("[master] stopped");
  return Status::Ok();
}

}  // namespace ring
