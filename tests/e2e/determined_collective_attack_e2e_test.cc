// The determined package's collectives on a real cluster, attacked: while the
// chief of a two-rank trial waits for its ranks on the port it published in
// the allocation's rendezvous store, this test (which can read the port in
// the trial's logs, but not the store, whose token only the allocation has)
// connects as rank 1 with a guessed secret, sends a pickle that would run a
// command if it were ever unpickled, and holds a silent connection. The real
// rank 1 still joins, the allgather gives both ranks [0, 1], the command
// never ran and the trial completes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::determined_collective_attack_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Rank 1 prints the chief's port and joins only once the test is done attacking.
constexpr const char* kScript = R"(import json, os, sys, time
import determined as det
import ringtrial
from determined.core import _runtime

info = det.get_cluster_info()
marker = os.path.join(info.trial.hparams["dir"], "attacked")
d = det.core.DistributedContext.from_torch_distributed()
with det.core.init(distributed=d) as core:
    if d.rank == 1:
        hub = json.loads(ringtrial.allocation_store(_runtime.existing()).get("determined/0/world", 60.0))
        print(f"hub-port {hub['port']}", flush=True)
        deadline = time.time() + 60
        while not os.path.exists(marker) and time.time() < deadline:
            time.sleep(0.1)
    print(f"rank {d.rank} allgather {d.allgather(d.rank)}", flush=True)
    core.train.report_validation_metrics(steps_completed=1, metrics={"x": 1})
)";

// One frame of the collectives' transport: 8-byte big-endian length, payload.
std::string Frame(const std::string& payload) {
  std::string out(8, '\0');
  uint64_t n = payload.size();
  for (int i = 7; i >= 0; --i, n >>= 8) out[i] = static_cast<char>(n & 0xff);
  return out + payload;
}

TEST(DeterminedCollectiveAttackE2E, AStrangerOnTheChiefsPortCannotJoinOrInjectObjects) {
  if (!fs::exists(BinDir() + "/../python/determined/__init__.py"))
    GTEST_SKIP() << "the trial runtime's Python folder was not built (pybind11-dev, python3-dev)";
  TestCluster cluster;
  cluster.StartMaster();
  TestCluster::AgentOptions options;
  const char* path = std::getenv("PATH");
  options.env["PATH"] = std::string("/usr/bin:/bin") + (path ? std::string(":") + path : "");
  cluster.StartAgent("agent-1", 2, options);
  const std::string dir = cluster.dir() + "/attack";
  fs::create_directories(dir);
  const std::string pwned = dir + "/pwned";
  const std::string model = cluster.MakeModelDir("collective-attack", {{"attack.py", kScript}});
  const std::string config = cluster.WriteFile(
      "attack.yaml",
      "name: collective-attack\nentrypoint: python3 attack.py\nhyperparameters:\n  dir: " + dir +
          "\nsearcher:\n  name: single\n  metric: x\n  max_length:\n    batches: 1\n"
          "resources:\n  slots_per_trial: 2\nmax_restarts: 0\n");
  auto created = cluster.Ring({"--json", "experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t exp = nlohmann::json::parse(created.out).value("id", int64_t{0});
  nlohmann::json trials;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
        return !trials.empty();
      },
      30s));
  const std::string trial = "/api/v1/trials/" + std::to_string(trials[0]["id"].get<int64_t>());

  int port = 0;
  const std::regex hub_port(R"(hub-port (\d+))");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto logs = cluster.GetJson(trial + "/logs?limit=1000")["logs"];
        for (const auto& l : logs) {
          std::smatch m;
          const std::string line = l["line"];
          if (std::regex_search(line, m, hub_port)) port = std::stoi(m[1]);
        }
        return port > 0;
      },
      60s))
      << "rank 1 never printed the chief's port";

  {
    // Rank 1's place with a guessed secret, then an object for it to unpickle.
    RawConnection guess(port);
    ASSERT_TRUE(guess.connected());
    const std::string command = "cos\nsystem\n(S'touch " + pwned + "'\ntR.";
    guess.Send(Frame(R"({"member": 1, "secret": "00"})") + Frame(command));
    // A pickle where the hello goes, and a connection that says nothing.
    RawConnection pickled(port);
    pickled.Send(Frame(command));
    RawConnection silent(port);
    EXPECT_TRUE(guess.ReadUntilClosed()) << "the chief kept a connection with a wrong secret";
    EXPECT_TRUE(pickled.ReadUntilClosed()) << "the chief kept a connection whose hello was a pickle";
    fs::create_directories(dir);
    std::ofstream(dir + "/attacked") << "";
    auto waited = cluster.Ring({"experiment", "wait", std::to_string(exp)});
    EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  }
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/" + std::to_string(exp))["state"], "COMPLETED");
  EXPECT_FALSE(fs::exists(pwned)) << "the injected pickle ran";
  int joined = 0;
  TestCluster::WaitFor(
      [&] {
        joined = 0;
        const auto logs = cluster.GetJson(trial + "/logs?limit=1000")["logs"];
        for (const auto& l : logs)
          joined += l["line"].get<std::string>().find("allgather [0, 1]") != std::string::npos;
        return joined == 2;
      },
      15s);
  EXPECT_EQ(joined, 2) << "both ranks gather [0, 1]: the real rank 1 joined";
}

}  // namespace
}  // namespace ring::testing::determined_collective_attack_e2e
