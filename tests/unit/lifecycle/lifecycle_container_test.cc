// Experiments with environment.image: each rank's start carries the image of
// its kind of slot, the registry credentials, force_pull, the checkpoint
// folder and the bind mounts; a pool whose agents have no container runtime
// (or not the one the pool requires) refuses the experiment at submit,
// naming the pool and the key's line.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace lifecycle_container_test {

const std::string kHead =
    "name: boxed\nentrypoint: ./run.sh\nsearcher:\n  name: single\n  metric: validation_loss\n"
    "  max_length:\n    batches: 10\n";  // 7 lines

std::shared_ptr<testing::RecordingChannel> ConnectWith(testing::LifecycleDriver& controller, SteadyTime now,
                                                       const std::string& id, const std::string& slot_type,
                                                       std::vector<proto::ContainerRuntime> runtimes,
                                                       const std::string& pool = "default") {
  auto channel = std::make_shared<testing::RecordingChannel>();
  proto::Hello hello{id, pool, "10.0.0.1", "test", {{0, slot_type, slot_type == "cuda" ? "GPU-0" : ""}}, {}};
  hello.container_runtimes = std::move(runtimes);
  controller.OnAgentHello(hello, channel, now);
  return channel;
}

class LifecycleContainerTest : public testing::LifecycleFixture {};

TEST_F(LifecycleContainerTest, StartsCarryTheImageOfTheirKindOfSlotAndItsMounts) {
  auto cpu = ConnectWith(controller_, now_, "cpu-agent", "cpu", {{"podman", "4.3.1", false}});
  CreateFrom(kHead +
             "environment:\n"
             "  image: {cpu: team/cpu:1, cuda: team/gpu:1}\n"
             "  force_pull_image: true\n"
             "  registry_auth: {username: alice, password: pw}\n"
             "bind_mounts:\n"
             "  - {host_path: /srv/data, container_path: /data, read_only: true}\n");
  auto starts = cpu->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_TRUE(starts[0].container);
  const proto::Container& c = *starts[0].container;
  EXPECT_EQ(c.image, "team/cpu:1");
  EXPECT_TRUE(c.force_pull);
  EXPECT_EQ(c.runtime, "");  // the pool requires none
  EXPECT_EQ(c.registry_auth.at("username"), "alice");
  EXPECT_EQ(c.registry_auth.at("password"), "pw");
  EXPECT_EQ(c.checkpoint_path, options_.checkpoint_root);  // the master's default storage
  ASSERT_EQ(c.mounts.size(), 1u);
  EXPECT_EQ(c.mounts[0].host_path, "/srv/data");
  EXPECT_EQ(c.mounts[0].container_path, "/data");
  EXPECT_TRUE(c.mounts[0].read_only);
}

TEST_F(LifecycleContainerTest, AKindOfSlotWithoutAnImageRunsOnTheHost) {
  auto gpu = ConnectWith(controller_, now_, "gpu-agent", "cuda", {{"podman", "4.3.1", false}});
  CreateFrom(kHead + "environment:\n  image: {cpu: team/cpu:1}\n");
  auto starts = gpu->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_FALSE(starts[0].container) << "a GPU slot and only a CPU image";
}

TEST_F(LifecycleContainerTest, APoolWhoseAgentsHaveNoRuntimeRefusesAnImageAtSubmit) {
  ConnectWith(controller_, now_, "bare", "cpu", {});
  const std::string config = kHead + "environment:\n  image: team/cpu:1\n";
  auto refused = controller_.CreateExperiment(config, model_, true, "alice");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(refused.status().message().find("experiment.yaml:9: environment.image: pool default cannot run "
                                            "containers: none of its 1 agent has a container runtime"),
            std::string::npos)
      << refused.status().message();
  // An agent with a runtime joins: the pool can run it now.
  ConnectWith(controller_, now_, "boxed", "cpu", {{"docker", "28.2.2", false}});
  EXPECT_TRUE(controller_.CreateExperiment(config, model_, true, "alice").ok());
}

// In a pool of agents with and without a runtime, a trial with an image
// goes only to one with a runtime, even where best fit would put it on
// another (equal agents, the one without first by id), and waits while
// those are busy, saying so; a trial without an image takes the other.
TEST_F(LifecycleContainerTest, ImagesArePlacedOnlyOnAgentsWithARuntime) {
  auto bare = ConnectWith(controller_, now_, "a-bare", "cpu", {});
  auto boxed = ConnectWith(controller_, now_, "b-boxed", "cpu", {{"podman", "4.3.1", false}});
  const std::string image = kHead + "environment:\n  image: team/cpu:1\n";
  CreateFrom(image);
  ASSERT_EQ(boxed->Of<proto::Start>().size(), 1u);
  EXPECT_TRUE(bare->Of<proto::Start>().empty());
  CreateFrom(image);
  EXPECT_TRUE(bare->Of<proto::Start>().empty()) << "an image placed on an agent without a runtime";
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_TRUE(jobs[1]["pending_reason"].is_string()) << jobs.dump();
  EXPECT_NE(jobs[1]["pending_reason"].get<std::string>().find(
                "only on agents with a container runtime (1 of 2 in pool default)"),
            std::string::npos)
      << jobs[1].dump();
  CreateFrom(kHead);  // no image: the free agent takes it
  ASSERT_EQ(bare->Of<proto::Start>().size(), 1u);
  EXPECT_FALSE(bare->Of<proto::Start>()[0].container);
}

class LifecyclePoolRuntimeTest : public testing::LifecycleFixture {
 protected:
  LifecyclePoolRuntimeTest() {
    PoolSettings pool;
    pool.name = "default";
    pool.container_runtime = "apptainer";
    options_.pools = {pool};
  }
};

TEST_F(LifecyclePoolRuntimeTest, APoolRequiringARuntimeRefusesAgentsWithoutItAndNamesIt) {
  testing::LifecycleDriver controller{store_, options_};
  auto channel = ConnectWith(controller, now_, "podman-only", "cpu", {{"podman", "4.3.1", false}});
  const std::string config = kHead + "environment:\n  image: /images/train.sif\n";
  auto refused = controller.CreateExperiment(config, model_, true, "alice");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("pool default runs containers with apptainer"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("(they have podman)"), std::string::npos)
      << refused.status().message();
  auto other = ConnectWith(controller, now_, "apptainer", "cpu", {{"apptainer", "1.3.4", false}});
  ASSERT_TRUE(controller.CreateExperiment(config, model_, true, "alice").ok());
  // The start names the runtime the pool requires.
  std::vector<proto::Start> starts = channel->Of<proto::Start>();
  for (const auto& s : other->Of<proto::Start>()) starts.push_back(s);
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_TRUE(starts[0].container);
  EXPECT_EQ(starts[0].container->runtime, "apptainer");
}

class LifecycleOwnDirsTest : public testing::LifecycleFixture {
 protected:
  LifecycleOwnDirsTest() { options_.own_dirs = {"/var/lib/ringmaster", ""}; }
};

TEST_F(LifecycleOwnDirsTest, BindMountsOfTheMastersOwnFoldersAreRefusedWithTheirLine) {
  testing::LifecycleDriver controller{store_, options_};
  ConnectWith(controller, now_, "boxed", "cpu", {{"podman", "4.3.1", false}});
  const std::string image = kHead + "environment:\n  image: team/cpu:1\nbind_mounts:\n";
  for (const std::string host : {"/var/lib/ringmaster", "/var/lib/ringmaster/db", "/var/lib", "/"}) {
    auto refused = controller.CreateExperiment(
        image + "  - {host_path: /srv, container_path: /srv}\n  - {host_path: " + host +
            ", container_path: /x}\n",
        model_, true, "alice");
    ASSERT_FALSE(refused.ok()) << host;
    EXPECT_NE(refused.status().message().find("experiment.yaml:12: bind_mounts[1].host_path " + host +
                                              " reaches the master's own folder /var/lib/ringmaster"),
              std::string::npos)
        << refused.status().message();
  }
  EXPECT_TRUE(controller
                  .CreateExperiment(image + "  - {host_path: /var/lib/ringmaster-data, container_path: /x}\n",
                                    model_, true, "alice")
                  .ok())
      << "a sibling folder is not the master's";
  // Without an image nothing is mounted (the trial sees the host's folders).
  EXPECT_TRUE(
      controller
          .CreateExperiment(kHead + "bind_mounts: [{host_path: /var/lib, container_path: /var/lib}]\n",
                            model_, true, "alice")
          .ok());
}

}  // namespace lifecycle_container_test
}  // namespace ring
