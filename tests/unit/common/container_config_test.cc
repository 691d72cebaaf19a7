// The container keys of the experiment config (docs/containers.md):
// environment.image in its string and {cpu, cuda} forms, registry_auth,
// force_pull_image and bind_mounts, with Determined's meaning; each error
// names its key and line, and never shows a credential.
#include <gtest/gtest.h>

#include <string>

#include "common/experiment_config.h"

namespace ring {
namespace container_config_test {

const std::string kContainerHead = "name: x\nentrypoint: ./run.sh\nsearcher: {name: single, metric: loss}\n";

// The first error on `line` naming `key`, or "" when there is none.
std::string ErrorOn(const ConfigCheck& check, int line, const std::string& key) {
  for (const auto& e : check.errors)
    if (e.line == line && e.message.find(key) != std::string::npos) return e.message;
  return "";
}

TEST(ContainerConfigTest, AStringImageServesBothKindsOfSlot) {
  auto check = CheckExperimentConfig(kContainerHead + "environment:\n  image: localhost/quadratic:1\n");
  ASSERT_TRUE(check.config) << check.ErrorText();
  EXPECT_EQ(check.config->environment.cpu_image, "localhost/quadratic:1");
  EXPECT_EQ(check.config->environment.cuda_image, "localhost/quadratic:1");
  EXPECT_EQ(check.config->environment.image_line, 5);
  EXPECT_FALSE(check.config->environment.force_pull_image);
  EXPECT_TRUE(check.warnings.empty()) << check.warnings.front().message;
}

TEST(ContainerConfigTest, TheMapFormCountsGpuAndRocmAsCuda) {
  auto gpu = CheckExperimentConfig(kContainerHead + "environment:\n  image: {cpu: a/cpu:1, gpu: a/gpu:1}\n");
  ASSERT_TRUE(gpu.config) << gpu.ErrorText();
  EXPECT_EQ(gpu.config->environment.cpu_image, "a/cpu:1");
  EXPECT_EQ(gpu.config->environment.cuda_image, "a/gpu:1");
  auto rocm = CheckExperimentConfig(kContainerHead + "environment:\n  image: {rocm: a/rocm:1}\n");
  ASSERT_TRUE(rocm.config) << rocm.ErrorText();
  EXPECT_EQ(rocm.config->environment.cpu_image, "");
  EXPECT_EQ(rocm.config->environment.cuda_image, "a/rocm:1");
  // Two different images for GPU slots cannot both be meant.
  auto both = CheckExperimentConfig(kContainerHead + "environment:\n  image:\n    cuda: a:1\n    gpu: b:1\n");
  EXPECT_FALSE(both.config);
  EXPECT_NE(ErrorOn(both, 7, "environment.image.gpu"), "") << both.ErrorText();
}

TEST(ContainerConfigTest, BadImagesAreRefusedWithKeyAndLine) {
  for (const std::string bad : {"\"\"", "\"-v /:/host\"", "[a, b]", "\"a b\""}) {
    auto check = CheckExperimentConfig(kContainerHead + "environment:\n  image: " + bad + "\n");
    EXPECT_FALSE(check.config) << bad;
    EXPECT_NE(ErrorOn(check, 5, "environment.image"), "") << bad << ": " << check.ErrorText();
  }
  auto key = CheckExperimentConfig(kContainerHead + "environment:\n  image: {cpu: a, tpu: b}\n");
  EXPECT_NE(ErrorOn(key, 5, "environment.image.tpu"), "") << key.ErrorText();
}

TEST(ContainerConfigTest, RegistryAuthAndForcePullAreRead) {
  auto check = CheckExperimentConfig(kContainerHead +
                                     "environment:\n"
                                     "  image: registry.example.com/team/train:3\n"
                                     "  force_pull_image: true\n"
                                     "  registry_auth:\n"
                                     "    username: alice\n"
                                     "    password: s3cret-pass\n"
                                     "    serveraddress: registry.example.com\n");
  ASSERT_TRUE(check.config) << check.ErrorText();
  const auto& env = check.config->environment;
  EXPECT_TRUE(env.force_pull_image);
  ASSERT_TRUE(env.registry_auth);
  EXPECT_EQ(env.registry_auth->username, "alice");
  EXPECT_EQ(env.registry_auth->password, "s3cret-pass");
  EXPECT_EQ(env.registry_auth->serveraddress, "registry.example.com");
  // A malformed password is refused without showing it.
  auto bad = CheckExperimentConfig(kContainerHead +
                                   "environment:\n  image: a:1\n  registry_auth:\n    username: alice\n"
                                   "    password: [s3cret-pass]\n");
  EXPECT_FALSE(bad.config);
  EXPECT_NE(ErrorOn(bad, 8, "environment.registry_auth.password"), "") << bad.ErrorText();
  EXPECT_EQ(bad.ErrorText().find("s3cret"), std::string::npos) << bad.ErrorText();
  auto half = CheckExperimentConfig(kContainerHead +
                                    "environment:\n  image: a:1\n  registry_auth: {username: alice}\n");
  EXPECT_NE(ErrorOn(half, 6, "environment.registry_auth"), "") << half.ErrorText();
}

TEST(ContainerConfigTest, BindMountsKeepDeterminedsMeaning) {
  auto check =
      CheckExperimentConfig(kContainerHead +
                            "environment: {image: a:1}\n"
                            "bind_mounts:\n"
                            "  - host_path: /srv/data/\n"
                            "    container_path: /data\n"
                            "    read_only: true\n"
                            "  - {host_path: /tmp, container_path: /scratch, propagation: rshared}\n");
  ASSERT_TRUE(check.config) << check.ErrorText();
  const auto& mounts = check.config->bind_mounts;
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].host_path, "/srv/data/");  // lexically normal keeps the trailing slash
  EXPECT_EQ(mounts[0].container_path, "/data");
  EXPECT_TRUE(mounts[0].read_only);
  EXPECT_EQ(mounts[0].propagation, "rprivate");  // Determined's default
  EXPECT_EQ(mounts[0].line, 6);
  EXPECT_FALSE(mounts[1].read_only);
  EXPECT_EQ(mounts[1].propagation, "rshared");
}

TEST(ContainerConfigTest, BindMountPathsMustBeAbsoluteWithoutDotDot) {
  const std::string image = "environment: {image: a:1}\nbind_mounts:\n";
  struct Case {
    std::string mount;
    std::string key;
  } cases[] = {
      {"{host_path: data, container_path: /data}", "bind_mounts[0].host_path"},
      {"{host_path: /srv/../etc, container_path: /data}", "bind_mounts[0].host_path"},
      {"{host_path: /srv, container_path: data}", "bind_mounts[0].container_path"},
      {"{host_path: /srv, container_path: /}", "bind_mounts[0].container_path"},
      {"{host_path: /srv, container_path: /d, propagation: sideways}", "bind_mounts[0].propagation"},
      {"{host_path: /srv, container_path: /d, read_only: maybe}", "bind_mounts[0].read_only"},
      {"{container_path: /d}", "host_path"},
      {"{host_path: /srv, container_path: /d, mode: rw}", "bind_mounts[0].mode"},
  };
  for (const auto& c : cases) {
    auto check = CheckExperimentConfig(kContainerHead + image + "  - " + c.mount + "\n");
    EXPECT_FALSE(check.config) << c.mount;
    EXPECT_NE(ErrorOn(check, 6, c.key), "") << c.mount << ": " << check.ErrorText();
  }
  auto twice = CheckExperimentConfig(kContainerHead + image +
                                     "  - {host_path: /a, container_path: /d}\n"
                                     "  - {host_path: /b, container_path: /d}\n");
  EXPECT_NE(ErrorOn(twice, 7, "bind_mounts[1].container_path"), "") << twice.ErrorText();
}

TEST(ContainerConfigTest, WithoutAnImageOnlyMountsToTheSamePathHold) {
  // Determined's examples mount /tmp at /tmp: on the host it is there already.
  auto same =
      CheckExperimentConfig(kContainerHead + "bind_mounts: [{host_path: /tmp, container_path: /tmp}]\n");
  ASSERT_TRUE(same.config) << same.ErrorText();
  ASSERT_EQ(same.warnings.size(), 1u);
  EXPECT_NE(same.warnings[0].message.find("bind_mounts[0]"), std::string::npos);
  // Another path needs a container.
  auto moved =
      CheckExperimentConfig(kContainerHead + "bind_mounts:\n  - {host_path: /srv, container_path: /data}\n");
  EXPECT_FALSE(moved.config);
  EXPECT_NE(ErrorOn(moved, 5, "environment.image"), "") << moved.ErrorText();
  // An empty list asks for nothing.
  auto empty = CheckExperimentConfig(kContainerHead + "bind_mounts: []\n");
  EXPECT_TRUE(empty.config) << empty.ErrorText();
}

}  // namespace container_config_test
}  // namespace ring
