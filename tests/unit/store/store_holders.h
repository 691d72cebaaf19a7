#pragma once
// The two Store implementations as typed-test parameters: a SqliteStore on a
// file in a scratch folder removed afterwards, and a MemoryStore.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

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

}  // namespace ring::testing
