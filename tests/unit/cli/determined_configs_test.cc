// `ring config check` on the 42 configs of Determined 0.38.1's examples/
// (tests/determined/README.md): each is accepted, or refused only for a
// feature Ringmaster does not have yet, with an error that names it. Offline:
// no master is given. The notebook config among them is checked as one.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/cli/cli_result.h"

namespace ring::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(RING_SOURCE_DIR) / "tests/determined/configs";

// Why a config may be refused: a feature Ringmaster does not have yet, as an
// error message names it.
const std::map<std::string, std::string> kMissingFeature = {
    {"proxy", "not a trial's ports"},
    {"zero-slot trials", "a trial that holds no slot"},
};

// The refused configs and the features they need; every other one is accepted.
const std::map<std::string, std::vector<std::string>> kRefused = {
    {"examples/features/ports/ray_launcher.yaml", {"proxy"}},
    {"examples/features/unmanaged/2.yaml", {"zero-slot trials"}},
};

std::vector<std::string> AllConfigs() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), kRoot).string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DeterminedConfigsTest, FortyTwoConfigsAreThere) {
  EXPECT_EQ(AllConfigs().size(), 42u);
}

TEST(DeterminedConfigsTest, EachIsAcceptedOrRefusedForAMissingFeature) {
  int accepted = 0, refused = 0;
  for (const auto& rel : AllConfigs()) {
    SCOPED_TRACE(rel);
    const CliResult r = RunRing({"--json", "config", "check", (kRoot / rel).string()});
    const auto answer = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(answer.is_object()) << r.out << r.err;
    // Offline, the answer says what it could not check.
    EXPECT_FALSE(answer["not_checked"].empty());
    const auto it = kRefused.find(rel);
    if (it == kRefused.end()) {
      EXPECT_EQ(r.code, 0) << answer.dump(2);
      EXPECT_EQ(answer["kind"], rel.find("notebook") != std::string::npos ? "task" : "experiment");
      EXPECT_TRUE(answer["errors"].empty()) << answer.dump(2);
      ++accepted;
      continue;
    }
    ++refused;
    EXPECT_EQ(r.code, 1);
    ASSERT_FALSE(answer["errors"].empty());
    // Each feature it needs is named by an error...
    for (const auto& feature : it->second) {
      bool named = false;
      for (const auto& e : answer["errors"])
        named =
            named || e["message"].get<std::string>().find(kMissingFeature.at(feature)) != std::string::npos;
      EXPECT_TRUE(named) << feature << "\n" << answer.dump(2);
    }
    // ...and every error is about a missing feature.
    for (const auto& e : answer["errors"]) {
      bool missing = false;
      for (const auto& [name, words] : kMissingFeature)
        missing = missing || e["message"].get<std::string>().find(words) != std::string::npos;
      EXPECT_TRUE(missing) << e.dump();
    }
  }
  EXPECT_EQ(accepted, 40);
  EXPECT_EQ(refused, 2);
}

// Determined's notebook config is a task config: checked by the parser
// `ring notebook start --config-file` goes through, its errors with their
// lines; asked to check it as an experiment config, it is refused as one.
TEST(DeterminedConfigsTest, ANotebookConfigIsCheckedAsOne) {
  const std::string notebook =
      (kRoot / "examples/diffusion/textual_inversion_stable_diffusion/detsd-notebook.yaml").string();
  CliResult r = RunRing({"config", "check", notebook});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("detsd-notebook.yaml: valid command, shell or notebook config"), std::string::npos)
      << r.out;
  r = RunRing({"--json", "config", "check", "--kind", "experiment", notebook});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("belongs to a shell or notebook config"), std::string::npos) << r.out;

  const fs::path dir = fs::temp_directory_path() / ("ring-notebook-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bad = (dir / "notebook.yaml").string();
  std::ofstream(bad) << "description: nb\nresources:\n  slots: -1\nidle_timeout: soon\n";
  r = RunRing({"--json", "config", "check", bad});  // its idle_timeout says what it is
  fs::remove_all(dir);
  EXPECT_EQ(r.code, 1) << r.out;
  const auto answer = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << r.out;
  EXPECT_EQ(answer["kind"], "task");
  ASSERT_EQ(answer["errors"].size(), 2u) << answer.dump(2);
  EXPECT_EQ(answer["errors"][0]["line"], 3) << answer.dump(2);
  EXPECT_EQ(answer["errors"][1]["line"], 4) << answer.dump(2);
}

}  // namespace
}  // namespace ring::cli
