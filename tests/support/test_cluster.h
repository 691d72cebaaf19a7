#pragma once
// A real master and real agents on 127.0.0.1 with their data in one
// temporary directory, for integration and end-to-end tests. When it goes
// away, every answer its clients got is checked against docs/openapi.json
// (api_answers.h; a mismatch fails the test) and everything it started is
// stopped.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "tests/support/api_answers.h"
#include "tests/support/checked_http_client.h"
#include "tests/support/held_port.h"
#include "tests/support/process.h"

namespace ring::testing {

std::string BinDir();     // RING_BIN_DIR, set by CTest
std::string SourceDir();  // RING_SOURCE_DIR

class TestCluster {
 public:
  struct MasterOptions {
    int64_t heartbeat_timeout_ms = 3000;
    int64_t reconnect_window_ms = 2000;
    std::vector<std::string> extra_args;
    // Where the master listens, and a command its argv is appended to (e.g.
    // {"ip", "netns", "exec", "node-0"} to run it inside a network namespace).
    std::string host = "127.0.0.1";
    std::vector<std::string> launcher;
    // TLS: with a certificate and key (PEM) the master serves HTTPS only;
    // url() is https and client(), agents and Ring() trust `ca_file`.
    std::string tls_cert_file;
    std::string tls_key_file;
    std::string ca_file;
  };
  struct AgentOptions {
    std::vector<std::string> launcher;  // as MasterOptions::launcher
    // False (the default): --single-user, trials run as the test's own user
    // (root here) and can use its folders. True: the agent runs each trial
    // as its owner's Unix account (the test makes the accounts and folders).
    bool run_as_owner = false;
    std::vector<std::string> extra_args;     // appended to the agent's command line
    std::map<std::string, std::string> env;  // added to the agent's environment
    std::string token_file;                  // default: cluster_token_file()
    std::string work_dir;                    // default: dir()/agent-<id>
    std::string state_dir;                   // default: agent_state_dir(id)
  };

  TestCluster();
  ~TestCluster();

  void StartMaster(const MasterOptions& options);
  void StartMaster() { StartMaster(MasterOptions{}); }
  void StopMaster();
  // SIGKILLs the master (nothing flushed, nothing said to agents).
  void KillMaster();
  ChildProcess* master() { return master_.get(); }
  // Starts an agent and waits until the master lists it as connected.
  ChildProcess& StartAgent(const std::string& id, int cpu_slots, const AgentOptions& options);
  ChildProcess& StartAgent(const std::string& id, int cpu_slots) { return StartAgent(id, cpu_slots, {}); }
  ChildProcess& agent(const std::string& id) { return agents_.at(id); }

  std::string url() const { return scheme_ + "://" + host_ + ":" + std::to_string(port_); }
  // The CA file the client, agents and Ring() trust (MasterOptions::ca_file).
  const std::string& ca_file() const { return ca_file_; }
  const std::string& dir() const { return dir_; }
  // The cluster token agents present, made by the master at its first start.
  std::string cluster_token_file() const { return dir_ + "/master/cluster-token"; }
  // The state folder (credential) of an agent StartAgent started.
  std::string agent_state_dir(const std::string& id) const { return dir_ + "/agent-" + id + "-state"; }
  CheckedHttpClient& client() { return *client_; }
  // A client of its own (one per thread, or another user's token), without
  // a token; its answers are checked like client()'s.
  std::unique_ptr<CheckedHttpClient> NewClient(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Where client()'s answers go; answers fetched some other way (curl, a
  // CheckedHttpClient of another master) are added here to be checked too.
  const std::shared_ptr<ApiAnswerLog>& answers() const { return answers_; }
  // The admin's first password (made by the constructor, 0600), which the
  // master gets with --admin-password-file; client() and Ring() are signed
  // in with it.
  std::string admin_password_file() const { return dir_ + "/admin-password"; }
  std::string admin_password() const;
  const std::string& admin_token() const { return token_; }
  // A token of `username` from POST /api/v1/auth/login; empty when refused.
  std::string SignIn(const std::string& username, const std::string& password);
  // Creates a user as the admin and returns a token of theirs.
  std::string CreateUser(const std::string& username, const std::string& password,
                         const std::string& role = "user");

  // GET/POST returning parsed JSON (fails the test on transport errors).
  nlohmann::json GetJson(const std::string& target, int* status = nullptr);
  nlohmann::json PostJson(const std::string& target, const nlohmann::json& body, int* status = nullptr);
  nlohmann::json PatchJson(const std::string& target, const nlohmann::json& body, int* status = nullptr);
  // Runs the real `ring` CLI against this master, signed in as the admin
  // (`ring user login`, once after each StartMaster, at the first call).
  CommandResult Ring(std::vector<std::string> args);
  // Runs `ring` as another user: her token (CreateUser) in RING_TOKEN and a
  // configuration folder of her own, <dir>/<user>.
  CommandResult RingAs(const std::string& user, const std::string& token, std::vector<std::string> args);
  // Signs the CLI in now, if a master runs and it has not been since it
  // started; Ring() does this itself.
  void SignInCli();

  // Polls `done` (after 10 ms, then half as long again each time, up to
  // every 100 ms) until it holds or `timeout` passes.
  static bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout);

  // Writes files into a new model directory under dir(); returns its path.
  std::string MakeModelDir(const std::string& name, const std::map<std::string, std::string>& files);
  std::string WriteFile(const std::string& name, const std::string& text);
  // Dumps the master's and agents' logs to stderr (call when a test fails).
  void DumpLogs();

 private:
  nlohmann::json SendJson(const std::string& method, const std::string& target, const nlohmann::json& body,
                          int* status);
  std::string dir_;
  std::string host_ = "127.0.0.1";
  std::string scheme_ = "http";  // https when the master serves TLS
  std::string ca_file_;
  int port_ = 0;
  // The master's port on 127.0.0.1, held from its first start to the end of
  // the test: while the master is down, agents and clients that keep
  // connecting to it are refused rather than reaching a server or Gloo
  // listener of another test that was given the free port.
  std::unique_ptr<HeldPort> held_port_;
  std::unique_ptr<ChildProcess> master_;
  std::map<std::string, ChildProcess> agents_;
  std::shared_ptr<ApiAnswerLog> answers_ = std::make_shared<ApiAnswerLog>();
  std::unique_ptr<CheckedHttpClient> client_;
  std::string token_;
  bool cli_signed_in_ = false;

  std::map<std::string, std::string> CliEnvironment() const;
  CommandResult RunCli(std::vector<std::string> args);
};

}  // namespace ring::testing
