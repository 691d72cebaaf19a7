// Determined's command config as a task's spec: the keys it reads, unknown
// keys refused with their line, the flags laid over the file.
#include <gtest/gtest.h>

#include "common/task_config.h"

namespace ring {
namespace {

TEST(TaskConfig, ReadsDeterminedsCommandConfig) {
  auto spec = ParseTaskConfig(R"(description: nightly export
entrypoint: [python3, export.py, --all]
resources:
  slots: 2
  resource_pool: gpus
  priority: 10
  weight: 2.5
environment:
  environment_variables:
    cpu: [MODE=cpu]
    cuda: [MODE=gpu]
  image: python:3.11
bind_mounts:
  - host_path: /data
    container_path: /data
    read_only: true
idle_timeout: 30m
)");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->description, "nightly export");
  EXPECT_EQ(spec->argv, (std::vector<std::string>{"python3", "export.py", "--all"}));
  EXPECT_EQ(spec->slots, 2);
  EXPECT_EQ(spec->resource_pool, "gpus");
  EXPECT_EQ(spec->priority, 10);
  EXPECT_DOUBLE_EQ(spec->weight, 2.5);
  EXPECT_FALSE(spec->preemptible);
  EXPECT_EQ(spec->environment.cpu_variables.at("MODE"), "cpu");
  EXPECT_EQ(spec->environment.cuda_variables.at("MODE"), "gpu");
  EXPECT_EQ(spec->environment.cpu_image, "python:3.11");
  ASSERT_EQ(spec->bind_mounts.size(), 1u);
  EXPECT_TRUE(spec->bind_mounts[0].read_only);
  EXPECT_EQ(spec->idle_timeout_s, 1800);
}

// Determined's own notebook config (examples/diffusion/.../detsd-notebook.yaml).
TEST(TaskConfig, ReadsDeterminedsNotebookConfig) {
  auto spec = ParseTaskConfig(R"(description: detsd-notebook
resources:
    slots: 1
    shm_size: 17179869184 # 16 GiB
environment:
    environment_variables:
        - HF_AUTH_TOKEN=YOUR_HF_AUTH_TOKEN_HERE
idle_timeout: 2h
notebook_idle_type: kernel_connections
)");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->idle_timeout_s, 7200);
  EXPECT_EQ(spec->notebook_idle_type, NotebookIdleType::kKernelConnections);
  EXPECT_EQ(spec->environment.variables.at("HF_AUTH_TOKEN"), "YOUR_HF_AUTH_TOKEN_HERE");
  auto bad = ParseTaskConfig("notebook_idle_type: sometimes\n", "nb.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nb.yaml:1: notebook_idle_type must be kernels_or_terminals"),
            std::string::npos)
      << bad.status().message();
}

TEST(TaskConfig, AStringEntrypointRunsInAShellAndAListForm) {
  auto shell = ParseTaskConfig("entrypoint: echo $HOME && ls\n");
  ASSERT_TRUE(shell.ok());
  EXPECT_EQ(shell->argv, (std::vector<std::string>{"/bin/sh", "-c", "echo $HOME && ls"}));
  auto vars = ParseTaskConfig("environment:\n  environment_variables: [A=1, B=two=2]\n");
  ASSERT_TRUE(vars.ok());
  EXPECT_EQ(vars->environment.variables.at("B"), "two=2");
  EXPECT_TRUE(ParseTaskConfig("").ok());  // empty: the flags say everything
}

TEST(TaskConfig, UnknownKeysAndBadValuesNameTheKeyAndLine) {
  auto unknown = ParseTaskConfig("entrypoint: [true]\nresources:\n  slotz: 1\n", "cmd.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(unknown.status().message().find("cmd.yaml:3:"), std::string::npos) << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("slotz"), std::string::npos);

  auto top = ParseTaskConfig("entrypoint: [true]\nsearcher: {name: single}\n", "cmd.yaml");
  ASSERT_FALSE(top.ok());
  EXPECT_NE(top.status().message().find("cmd.yaml:2:"), std::string::npos) << top.status().message();

  // Every problem, one line each.
  auto several = ParseTaskConfig("resources:\n  priority: 0\n  slots: -1\nidle_timeout: soon\n", "cmd.yaml");
  ASSERT_FALSE(several.ok());
  const std::string text = several.status().message();
  EXPECT_NE(text.find("cmd.yaml:2: resources.priority"), std::string::npos) << text;
  EXPECT_NE(text.find("cmd.yaml:3: resources.slots"), std::string::npos) << text;
  EXPECT_NE(text.find("cmd.yaml:4: idle_timeout"), std::string::npos) << text;

  auto mounts = ParseTaskConfig("bind_mounts:\n  - {host_path: /a, container_path: /a}\n", "cmd.yaml");
  ASSERT_FALSE(mounts.ok());
  EXPECT_NE(mounts.status().message().find("environment.image"), std::string::npos);

  auto syntax = ParseTaskConfig("resources: [\n", "cmd.yaml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("invalid YAML"), std::string::npos);
}

TEST(TaskConfig, FlagsWinOverTheFile) {
  auto file =
      ParseTaskConfig("entrypoint: [sleep, '1']\nresources: {slots: 2, priority: 10, preemptible: true}\n");
  ASSERT_TRUE(file.ok());
  TaskFlags flags;
  flags.slots = 0;
  flags.priority = 60;
  flags.preemptible = false;
  flags.resource_pool = "cpu";
  flags.argv = {"echo", "hi"};
  auto spec = ApplyTaskFlags(*file, flags);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->slots, 0);
  EXPECT_EQ(spec->priority, 60);
  EXPECT_FALSE(spec->preemptible);
  EXPECT_EQ(spec->resource_pool, "cpu");
  EXPECT_EQ(spec->argv, (std::vector<std::string>{"echo", "hi"}));
  auto kept = ApplyTaskFlags(*file, {});
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->preemptible);
  EXPECT_EQ(kept->argv, (std::vector<std::string>{"sleep", "1"}));

  auto nothing = ApplyTaskFlags(TaskSpec{}, {});
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(nothing.status().message().find("argv"), std::string::npos);
  TaskFlags bad;
  bad.argv = {"true"};
  bad.priority = 100;
  auto out_of_range = ApplyTaskFlags(TaskSpec{}, bad);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("priority"), std::string::npos);
}

}  // namespace
}  // namespace ring
