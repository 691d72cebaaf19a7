// Experiments renamed, described and labelled after submit, through the
// real CLI and master: `ring experiment set name|description`, `ring
// experiment label add|remove`, then found again with `ring experiment
// list`'s filters; bad values change nothing; another user may not; what
// was set survives a master restart. The model folder comes back with
// `ring experiment download-model`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::experiment_edit_e2e {
namespace {

nlohmann::json ListJson(TestCluster& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), {"--json", "experiment", "list"});
  auto listed = cluster.Ring(args);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  return nlohmann::json::parse(listed.out, nullptr, false);
}

std::vector<int64_t> Ids(const nlohmann::json& list) {
  std::vector<int64_t> ids;
  for (const auto& e : list["experiments"]) ids.push_back(e["id"].get<int64_t>());
  return ids;
}

TEST(ExperimentEditE2E, NameDescriptionAndLabelsAreEditedAndFoundAgain) {
  TestCluster cluster;
  cluster.StartMaster();
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  // No agent: the experiments wait, which is all this test needs of them.
  for (int i = 0; i < 2; ++i) ASSERT_EQ(cluster.Ring({"experiment", "create", config, model}).exit_code, 0);

  auto renamed = cluster.Ring({"experiment", "set", "name", "1", "baseline lr 0.05"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.out << renamed.err;
  ASSERT_EQ(
      cluster.Ring({"experiment", "set", "description", "1", "the run everything is compared to"}).exit_code,
      0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "1", "baseline"}).exit_code, 0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "1", "paper"}).exit_code, 0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "2", "paper"}).exit_code, 0);
  auto one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["description"], "the run everything is compared to");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline", "paper"}));
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/2")["description"],
            "Synthetic linear regression, minibatch SGD (dependency-free C++ trial)")
      << "the config's until edited";

  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "paper"})), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "baseline"})), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--name", "BASELINE"})), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--sort", "id", "--desc"})), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--state", "ACTIVE", "--owner", "admin", "--archived", "false"})),
            (std::vector<int64_t>{1, 2}));
  auto table = cluster.Ring({"experiment", "list", "--label", "baseline"});
  EXPECT_NE(table.out.find("baseline, paper"), std::string::npos) << table.out;

  auto removed = cluster.Ring({"experiment", "label", "remove", "1", "paper"});
  ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "paper"})), (std::vector<int64_t>{2}));
  auto missing = cluster.Ring({"experiment", "label", "remove", "1", "paper"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("has no label \"paper\""), std::string::npos) << missing.err;

  // Bad values are refused naming the field, and change nothing.
  int status = 0;
  auto bad = cluster.PatchJson("/api/v1/experiments/1", {{"name", ""}, {"labels", {"x"}}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("name must be a string of 1 to 128 characters"), std::string::npos) << bad.dump();
  bad = cluster.PatchJson("/api/v1/experiments/1", {{"labels", {"ok", "tab\there"}}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  bad = cluster.PatchJson("/api/v1/experiments/1", {{"labels", {"ok"}}, {"colour", "red"}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("unknown field \\\"colour\\\""), std::string::npos) << bad.dump();
  one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline"}));

  // Another user may not; an admin may.
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto by_eve = cluster.RingAs("eve", eve, {"experiment", "set", "name", "1", "mine now"});
  EXPECT_NE(by_eve.exit_code, 0);
  EXPECT_NE(by_eve.err.find("belongs to admin"), std::string::npos) << by_eve.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["name"], "baseline lr 0.05");

  // Kept in SQLite: a restarted master shows them.
  cluster.StopMaster();
  cluster.StartMaster();
  one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["description"], "the run everything is compared to");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline"}));

  // The model folder as it was submitted.
  const std::string dir = cluster.dir() + "/downloaded";
  auto downloaded = cluster.Ring({"experiment", "download-model", "1", dir});
  ASSERT_EQ(downloaded.exit_code, 0) << downloaded.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/run.sh"));
}

}  // namespace
}  // namespace ring::testing::experiment_edit_e2e
