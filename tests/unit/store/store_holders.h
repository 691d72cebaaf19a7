#pragma once
// The two Store implementations as typed-test parameters: a SqliteStore on a
// file in a scratch folder removed afterwards, and a MemoryStore.
#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"

namespace ring::testing {

struct ScratchDir {
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ring_store_XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string path;
};

struct SqliteStoreHolder {
  SqliteStoreHolder() { store = std::move(SqliteStore::Open(dir.path + "/ring.db")).value(); }
  ScratchDir dir;
  std::unique_ptr<Store> store;
};

struct MemoryStoreHolder {
  std::unique_ptr<Store> store = std::make_unique<MemoryStore>();
};

using BothStores = ::testing::Types<SqliteStoreHolder, MemoryStoreHolder>;

// An experiment owned by alice (0 after a failed expectation).
inline int64_t NewExperiment(Store& store, const std::string& name = "exp") {
  ExperimentRecord e;
  e.name = name;
  e.owner = "alice";
  e.config_yaml = "name: " + name + "\n";
  auto id = store.CreateExperiment(e, "model");
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : 0;
}

// A trial of the experiment with default fields (0 after a failed expectation).
inline int64_t NewTrial(Store& store, int64_t experiment_id) {
  TrialRecord t;
  t.experiment_id = experiment_id;
  auto id = store.CreateTrial(t);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : 0;
}

// "2026-11-22T09:01:12.345Z": digits where the template has 'd'.
inline bool LooksLikeRfc3339(const std::string& s) {
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != kShape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != kShape[i]) return false;
  }
  return true;
}

}  // namespace ring::testing
