// A trial's own group (ConnectProcessGroup(ctx)): its ranks and agent from
// the environment, the store of its allocation, and the mistakes it reports
// before waiting for anyone.
#include <gtest/gtest.h>

#include <sstream>

#include "ring/trial/context.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

const char* const kArgv[] = {"trial"};

Context Make(const Environment& env) {
  static std::ostringstream quiet;
  ContextOptions o;
  o.local_out = &quiet;
  o.diagnostics = &quiet;
  return Context::from_environment(1, kArgv, env, std::move(o));
}

// Rank 1 of 2 under a master that is not there (port 1 refuses at once); as a
// non-chief it starts no metrics sender.
Environment Cluster() {
  return {{"RING_MASTER_URL", "http://127.0.0.1:1"},
          {"RING_ALLOCATION_ID", "7.0"},
          {"RING_ALLOCATION_TOKEN", "secret"},
          {"RING_API_RETRY_SECONDS", "0"},
          {"RANK", "1"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", "0"},
          {"LOCAL_WORLD_SIZE", "1"},
          {"RING_AGENT_ID", "node-b"},
          {"RING_AGENT_ADDR", "127.0.0.1"}};
}

TEST(DistributedContextTest, AgentIdAndAddressComeFromTheEnvironment) {
  auto ctx = Make(Cluster());
  EXPECT_EQ(ctx.agent_id(), "node-b");
  EXPECT_EQ(ctx.agent_address(), "127.0.0.1");
  auto env = Cluster();
  env.erase("RING_AGENT_ID");
  env.erase("RING_AGENT_ADDR");
  auto bare = Make(env);
  EXPECT_EQ(bare.agent_id(), "");
  EXPECT_EQ(bare.agent_address(), "");
  auto local = Make({});
  EXPECT_EQ(local.agent_id(), "local");
  EXPECT_EQ(local.agent_address(), "127.0.0.1");
}

TEST(DistributedContextTest, OneRankIsSingleAndNeedsNoMaster) {
  auto local = Make({});
  EXPECT_EQ(ConnectProcessGroup(local)->backend(), "single");
  auto env = Cluster();
  env["RANK"] = "0";
  env["WORLD_SIZE"] = "1";
  env.erase("RING_AGENT_ADDR");
  EXPECT_EQ(ConnectProcessGroup(Make(env))->backend(), "single");
  // Local mode's allocation store is in memory.
  auto store = AllocationStore(local);
  store->set("k", {1, 2});
  EXPECT_EQ(store->get("k", 0ms), (KeyValueStore::Bytes{1, 2}));
}

TEST(DistributedContextTest, MistakesAreReportedBeforeWaiting) {
  Environment local_pair = {{"RANK", "0"}, {"WORLD_SIZE", "2"}};
  try {
    ConnectProcessGroup(Make(local_pair));
    FAIL() << "local mode connected two ranks";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("local mode"), std::string::npos) << e.what();
  }
  auto env = Cluster();
  env.erase("RING_AGENT_ADDR");
  try {
    ConnectProcessGroup(Make(env));
    FAIL() << "connected without an address";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("RING_AGENT_ADDR is not set"), std::string::npos) << e.what();
  }
}

TEST(DistributedContextTest, AnUnreachableMasterIsARendezvousError) {
  auto ctx = Make(Cluster());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    ConnectProcessGroup(ctx);
    FAIL() << "connected without a master";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("the master did not answer while checking rendezvous keys"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // RING_API_RETRY_SECONDS=0
}

}  // namespace
}  // namespace ring::trial
