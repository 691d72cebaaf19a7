#include "tests/support/test_cluster.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

namespace ring::testing {
namespace fs = std::filesystem;

std::string BinDir() {
  const char* v = std::getenv("RING_BIN_DIR");
  return v ? v : RING_DEFAULT_BIN_DIR;
}

std::string SourceDir() {
  const char* v = std::getenv("RING_SOURCE_DIR");
  return v ? v : RING_DEFAULT_SOURCE_DIR;
}

TestCluster::TestCluster() {
  std::string tmpl = (fs::temp_directory_path() / "ring-test-XXXXXX").string();
  dir_ = mkdtemp(tmpl.data());
  std::random_device random;
  std::string password = "admin-";
  for (int i = 0; i < 4; ++i) password += std::to_string(random());
  std::ofstream(admin_password_file()) << password << "\n";
  fs::permissions(admin_password_file(), fs::perms::owner_read | fs::perms::owner_write);
}

TestCluster::~TestCluster() {
  if (Status s = answers_->CheckAndClear(dir_ + "/api-answers.jsonl"); !s.ok()) ADD_FAILURE() << s.message();
  if (::testing::Test::HasFailure()) DumpLogs();
  agents_.clear();  // stops agents before the master
  master_.reset();
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir_, ec);
}

void TestCluster::StartMaster(const MasterOptions& options) {
  const std::string port_file = dir_ + "/master.port";
  fs::remove(port_file);
  // A restarted master keeps its address, so running agents find it again.
  host_ = options.host;
  if (port_ == 0 && host_ == "127.0.0.1" && options.launcher.empty()) {
    held_port_ = std::make_unique<HeldPort>(HeldPort::Use::kServerMayBind);
    port_ = held_port_->port();
  }
  scheme_ = options.tls_cert_file.empty() ? "http" : "https";
  ca_file_ = options.ca_file;
  std::vector<std::string> argv = options.launcher;
  argv.insert(argv.end(), {BinDir() + "/ringmaster", "--listen", host_ + ":" + std::to_string(port_),
                           "--data-dir", dir_ + "/master", "--port-file", port_file, "--heartbeat-timeout-ms",
                           std::to_string(options.heartbeat_timeout_ms), "--reconnect-window-ms",
                           std::to_string(options.reconnect_window_ms), "--log-level", "debug",
                           "--admin-password-file", admin_password_file()});
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  if (!options.tls_cert_file.empty())
    argv.insert(argv.end(), {"--tls-cert", options.tls_cert_file, "--tls-key", options.tls_key_file});
  master_ = std::make_unique<ChildProcess>(argv, std::map<std::string, std::string>{}, dir_ + "/master.log");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(port_file) && !ReadFileText(port_file).empty(); },
                      std::chrono::seconds(20)))
      << "master did not write its port file";
  port_ = std::stoi(ReadFileText(port_file));
  client_ = NewClient();
  // Signed in as the admin, as a user would be: the client with a token of
  // its own, and the CLI through `ring user login` (its tokens file lives in
  // dir()/config).
  token_ = SignIn("admin", admin_password());
  ASSERT_FALSE(token_.empty()) << "cannot sign in as admin";
  client_->SetBearerToken(token_);
  // The CLI signs in at the first Ring() after each start, not here: most
  // tests never run it, and a sign-in is an Argon2id check in the master and
  // a process (12 tests that never run it: 18.1 s of CPU, 20.3 s before).
  cli_signed_in_ = false;
}

void TestCluster::SignInCli() {
  if (cli_signed_in_ || !client_) return;  // no master to sign in to: Ring() says why
  cli_signed_in_ = true;
  auto login = RunCli({"user", "login", "admin", "--password-file", admin_password_file()});
  EXPECT_EQ(login.exit_code, 0) << "ring user login: " << login.out << login.err;
}

std::string TestCluster::admin_password() const {
  std::string text = ReadFileText(admin_password_file());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::unique_ptr<CheckedHttpClient> TestCluster::NewClient(std::chrono::milliseconds timeout) {
  auto client = std::make_unique<CheckedHttpClient>(*Url::Parse(url()), answers_, timeout);
  client->SetCaFile(ca_file_);
  return client;
}

std::string TestCluster::SignIn(const std::string& username, const std::string& password) {
  auto http = NewClient();
  auto res =
      http->Post("/api/v1/auth/login", nlohmann::json{{"username", username}, {"password", password}}.dump());
  if (!res.ok() || res->status != 200) return {};
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  return body.is_object() ? body.value("token", "") : "";
}

std::string TestCluster::CreateUser(const std::string& username, const std::string& password,
                                    const std::string& role) {
  int status = 0;
  auto created =
      PostJson("/api/v1/users", {{"username", username}, {"password", password}, {"role", role}}, &status);
  EXPECT_EQ(status, 201) << created.dump();
  return SignIn(username, password);
}

void TestCluster::KillMaster() {
  if (master_) {
    master_->Signal(SIGKILL);
    master_->Wait(std::chrono::seconds(5));
  }
  master_.reset();
  client_.reset();
}

void TestCluster::StopMaster() {
  if (master_) master_->Stop();
  master_.reset();
  client_.reset();
}

ChildProcess& TestCluster::StartAgent(const std::string& id, int cpu_slots, const AgentOptions& options) {
  std::vector<std::string> argv = options.launcher;
  argv.insert(
      argv.end(),
      {BinDir() + "/ringagent", "--master", url(), "--id", id, "--cpu-slots", std::to_string(cpu_slots),
       "--work-dir", options.work_dir.empty() ? dir_ + "/agent-" + id : options.work_dir, "--state-dir",
       options.state_dir.empty() ? agent_state_dir(id) : options.state_dir, "--token-file",
       options.token_file.empty() ? cluster_token_file() : options.token_file, "--log-level", "debug"});
  if (!ca_file_.empty()) argv.insert(argv.end(), {"--ca-file", ca_file_});
  if (!options.run_as_owner) argv.push_back("--single-user");
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  agents_.erase(id);
  agents_.emplace(id, ChildProcess(argv, options.env, dir_ + "/agent-" + id + ".log"));
  bool connected = WaitFor(
      [&] {
        auto agents = GetJson("/api/v1/agents");
        for (const auto& a : agents.value("agents", nlohmann::json::array()))
          if (a.value("id", "") == id && a.value("state", "") == "connected") return true;
        return false;
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(connected) << "agent " << id << " did not connect";
  return agents_.at(id);
}

nlohmann::json TestCluster::GetJson(const std::string& target, int* status) {
  if (!client_) {
    ADD_FAILURE() << "no master is running";
    return {};
  }
  auto res = client_->Get(target);
  EXPECT_TRUE(res.ok()) << res.status().ToString();
  if (!res.ok()) return {};
  if (status) *status = res->status;
  return nlohmann::json::parse(res->body, nullptr, false);
}

nlohmann::json TestCluster::PostJson(const std::string& target, const nlohmann::json& body, int* status) {
  return SendJson("POST", target, body, status);
}

nlohmann::json TestCluster::PatchJson(const std::string& target, const nlohmann::json& body, int* status) {
  return SendJson("PATCH", target, body, status);
}

nlohmann::json TestCluster::SendJson(const std::string& method, const std::string& target,
                                     const nlohmann::json& body, int* status) {
  if (!client_) {
    ADD_FAILURE() << "no master is running";
    return {};
  }
  auto res = client_->Request(method, target, body.dump());
  EXPECT_TRUE(res.ok()) << res.status().ToString();
  if (!res.ok()) return {};
  if (status) *status = res->status;
  return nlohmann::json::parse(res->body, nullptr, false);
}

std::map<std::string, std::string> TestCluster::CliEnvironment() const {
  return {{"XDG_CONFIG_HOME", dir_ + "/config"}};
}

CommandResult TestCluster::Ring(std::vector<std::string> args) {
  SignInCli();
  return RunCli(std::move(args));
}

CommandResult TestCluster::RingAs(const std::string& user, const std::string& token,
                                  std::vector<std::string> args) {
  args.insert(args.begin(), {BinDir() + "/ring", "-m", url()});
  if (!ca_file_.empty()) args.insert(args.begin() + 3, {"--ca-file", ca_file_});
  return RunCommand(args, {{"RING_TOKEN", token}, {"XDG_CONFIG_HOME", dir_ + "/" + user}},
                    std::chrono::seconds(180));
}

CommandResult TestCluster::RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), {BinDir() + "/ring", "-m", url()});
  if (!ca_file_.empty()) args.insert(args.begin() + 3, {"--ca-file", ca_file_});
  return RunCommand(args, CliEnvironment(), std::chrono::seconds(180));
}

bool TestCluster::WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  // Often at first, as most waits (a port file, an agent connecting, a
  // state change) end within a few hundred ms, then every 100 ms, so a long
  // wait (training) costs the master no more requests than it used to.
  const auto until = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(10);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(pause);
    pause = std::min(std::chrono::milliseconds(100), pause * 3 / 2);
  }
  return done();
}

std::string TestCluster::MakeModelDir(const std::string& name,
                                      const std::map<std::string, std::string>& files) {
  const std::string root = dir_ + "/" + name;
  for (const auto& [rel, text] : files) {
    fs::path p = fs::path(root) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    if (p.extension() == ".sh")
      fs::permissions(p, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  }
  fs::create_directories(root);
  return root;
}

std::string TestCluster::WriteFile(const std::string& name, const std::string& text) {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

void TestCluster::DumpLogs() {
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().extension() != ".log") continue;
    std::cerr << "===== " << entry.path().filename().string() << " =====\n"
              << ReadFileText(entry.path().string());
  }
}

}  // namespace ring::testing
