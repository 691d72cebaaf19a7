// TLS end to end, with a throwaway CA and a master certificate for 127.0.0.1
// made at test time: a master serving HTTPS only, a real agent over wss and
// the real quadratic trial (its runtime verifying the master through the
// RING_CA_FILE its agent hands it) run an experiment to COMPLETED; the CLI
// with --ca-file or RING_CA_FILE works; clients without the CA, or reaching
// the master by a name its certificate does not list, get a clear
// verification error; plain HTTP, garbage and silent connections on the TLS
// port get an answer or a bounded wait while the master keeps serving; and a
// missing key file stops the master with a message naming it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/http_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_certs.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::tls {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_.WriteCert(ca_file());
    ca_.IssueServerCert({"IP:127.0.0.1"}, cert_file(), key_file());
  }
  std::string ca_file() const { return cluster_.dir() + "/ca.crt"; }
  std::string cert_file() const { return cluster_.dir() + "/master.crt"; }
  std::string key_file() const { return cluster_.dir() + "/master.key"; }
  TestCluster::MasterOptions TlsOptions() const {
    TestCluster::MasterOptions options;
    options.tls_cert_file = cert_file();
    options.tls_key_file = key_file();
    options.ca_file = ca_file();
    return options;
  }
  // A client of the cluster's master that trusts `ca_file` ("" = the system's CAs only).
  std::unique_ptr<CheckedHttpClient> Client(const std::string& url, const std::string& ca_file) {
    auto client = std::make_unique<CheckedHttpClient>(*Url::Parse(url), cluster_.answers(), 10s);
    client->SetCaFile(ca_file);
    return client;
  }

  TestCluster cluster_;
  TestCa ca_;
};

TEST_F(TlsTest, AnExperimentCompletesOverHttpsAndWss) {
  cluster_.StartMaster(TlsOptions());
  ASSERT_EQ(cluster_.url().rfind("https://127.0.0.1:", 0), 0u) << cluster_.url();
  cluster_.StartAgent("agent-1", 1);  // --master https://..., --ca-file: its WebSocket is wss
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  ASSERT_TRUE(fs::exists(model + "/run.sh")) << model;

  auto created = cluster_.Ring({"experiment", "create", config, model, "--follow"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  auto exp = cluster_.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  // The trial reported its metrics and finished its searcher operation over
  // https, trusting the CA through the RING_CA_FILE its agent set.
  auto trial = cluster_.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "COMPLETED") << trial.dump();
  EXPECT_EQ(trial["total_batches"], 500);
  EXPECT_FALSE(cluster_.GetJson("/api/v1/trials/1/metrics?kind=validation")["metrics"].empty());

  // The CLI with --ca-file (TestCluster::Ring passes it) lists the experiment...
  auto list = cluster_.Ring({"experiment", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("quadratic"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("COMPLETED"), std::string::npos) << list.out;
  // ...and so does one given the CA by RING_CA_FILE.
  auto by_env = RunCommand({BinDir() + "/ring", "-m", cluster_.url(), "experiment", "list"},
                           {{"RING_CA_FILE", ca_file()}, {"RING_TOKEN", cluster_.admin_token()}}, 60s);
  ASSERT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_NE(by_env.out.find("quadratic"), std::string::npos) << by_env.out;
}

TEST_F(TlsTest, AClientWithoutTheCaIsToldToPassIt) {
  cluster_.StartMaster(TlsOptions());
  auto untrusting = Client(cluster_.url(), "");
  auto res = untrusting->Get("/api/v1/health");
  ASSERT_FALSE(res.ok());
  const std::string& message = res.status().message();
  EXPECT_TRUE(IsCertificateFailure(res.status())) << message;
  EXPECT_NE(message.find("certificate verify failed for " + cluster_.url()), std::string::npos) << message;
  EXPECT_NE(message.find("(use --ca-file or RING_CA_FILE"), std::string::npos) << message;

  // The CLI says the same and exits 3 (the master could not be reached).
  auto cli = RunCommand({BinDir() + "/ring", "-m", cluster_.url(), "experiment", "list"}, {}, 60s);
  EXPECT_EQ(cli.exit_code, 3) << cli.err;
  EXPECT_NE(cli.err.find("certificate verify failed"), std::string::npos) << cli.err;
  EXPECT_NE(cli.err.find("--ca-file"), std::string::npos) << cli.err;

  // An agent without the CA does not connect, and its log says why.
  ChildProcess agent(
      {BinDir() + "/ringagent", "--master", cluster_.url(), "--id", "untrusting", "--cpu-slots", "1",
       "--work-dir", cluster_.dir() + "/agent-untrusting", "--state-dir",
       cluster_.dir() + "/untrusting-state", "--token-file", cluster_.cluster_token_file(), "--single-user"},
      {}, cluster_.dir() + "/agent-untrusting.log");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return ReadFileText(agent.log_path()).find("certificate verify failed") != std::string::npos; },
      15s))
      << ReadFileText(agent.log_path());
  EXPECT_EQ(cluster_.GetJson("/api/v1/agents").dump().find("untrusting"), std::string::npos);

  // With the CA the same request succeeds.
  auto trusting = Client(cluster_.url(), ca_file());
  auto ok = trusting->Get("/api/v1/health");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->status, 200);
}

TEST_F(TlsTest, AHostTheCertificateDoesNotNameFailsVerification) {
  cluster_.StartMaster(TlsOptions());
  const std::string port = std::to_string(PortOf(cluster_.url()));
  // "localhost" reaches the master, but its certificate names 127.0.0.1 only.
  auto by_name = Client("https://localhost:" + port, ca_file());
  auto res = by_name->Get("/api/v1/health");
  ASSERT_FALSE(res.ok());
  EXPECT_TRUE(IsCertificateFailure(res.status())) << res.status().message();
  EXPECT_NE(res.status().message().find("hostname mismatch"), std::string::npos) << res.status().message();

  // A master whose certificate, from the same CA, is for another host.
  ca_.IssueServerCert({"DNS:other.example"}, cluster_.dir() + "/other.crt", cluster_.dir() + "/other.key");
  const std::string port_file = cluster_.dir() + "/other.port";
  ChildProcess other({BinDir() + "/ringmaster", "--listen", "127.0.0.1:0", "--data-dir",
                      cluster_.dir() + "/other", "--port-file", port_file, "--tls-cert",
                      cluster_.dir() + "/other.crt", "--tls-key", cluster_.dir() + "/other.key"},
                     {}, cluster_.dir() + "/other-master.log");
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return fs::exists(port_file) && !ReadFileText(port_file).empty(); }, 20s))
      << ReadFileText(other.log_path());
  auto wrong_host =
      Client("https://127.0.0.1:" + std::to_string(std::stoi(ReadFileText(port_file))), ca_file());
  auto other_res = wrong_host->Get("/api/v1/health");
  ASSERT_FALSE(other_res.ok());
  EXPECT_TRUE(IsCertificateFailure(other_res.status())) << other_res.status().message();
  EXPECT_NE(other_res.status().message().find("IP address mismatch"), std::string::npos)
      << other_res.status().message();
}

TEST_F(TlsTest, PlainHttpAndGarbageOnTheTlsPortNeitherHangNorCrashTheMaster) {
  cluster_.StartMaster(TlsOptions());
  const int port = PortOf(cluster_.url());

  // A plain-HTTP client gets an answer saying to use https://.
  CheckedHttpClient plain(*Url::Parse("http://127.0.0.1:" + std::to_string(port)), cluster_.answers(), 10s);
  auto res = plain.Get("/api/v1/health");
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(ErrorMessageFromBody(*res).find("serves HTTPS only: use an https:// URL"), std::string::npos)
      << res->body;

  // A broken TLS record, then the client's end closed: the master closes too, at once.
  RawConnection broken(port);
  ASSERT_TRUE(broken.connected());
  ASSERT_TRUE(broken.Send(std::string("\x16\x03\x01\x00\x05hello", 10)));
  broken.CloseWrite();
  const auto began = std::chrono::steady_clock::now();
  EXPECT_TRUE(broken.ReadUntilClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - began, 4s);

  // A connection that never says anything stays open meanwhile (until the
  // handshake deadline) without holding anyone else up.
  RawConnection silent(port);
  ASSERT_TRUE(silent.connected());
  for (int i = 0; i < 3; ++i) {
    auto health = cluster_.client().Get("/api/v1/health");
    ASSERT_TRUE(health.ok()) << health.status().message();
    EXPECT_EQ(health->status, 200);
  }
  ASSERT_NE(cluster_.master(), nullptr);
  EXPECT_TRUE(cluster_.master()->running());
}

TEST_F(TlsTest, TheMasterRefusesToStartWithoutItsKeyFile) {
  const std::string missing = cluster_.dir() + "/missing.key";
  auto run = RunCommand({BinDir() + "/ringmaster", "--listen", "127.0.0.1:0", "--data-dir",
                         cluster_.dir() + "/m", "--tls-cert", cert_file(), "--tls-key", missing},
                        {}, 30s);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("TLS key file " + missing + " cannot be read"), std::string::npos) << run.err;

  // A key that is not the certificate's is refused by name too.
  ca_.WriteKey(cluster_.dir() + "/ca.key");
  auto mismatch =
      RunCommand({BinDir() + "/ringmaster", "--listen", "127.0.0.1:0", "--data-dir", cluster_.dir() + "/m",
                  "--tls-cert", cert_file(), "--tls-key", cluster_.dir() + "/ca.key"},
                 {}, 30s);
  EXPECT_NE(mismatch.exit_code, 0);
  EXPECT_NE(mismatch.err.find("TLS key file " + cluster_.dir() + "/ca.key does not match"), std::string::npos)
      << mismatch.err;
}

}  // namespace
}  // namespace ring::testing::tls
