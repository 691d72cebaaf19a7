// One rank of a sharded checkpoint test as a process of its own: a Context
// in cluster mode against the test's master, meeting the other ranks
// through a file store.
//   checkpoint_rank_helper --master URL --root DIR --store DIR --rank R --world W --mode M
//                          [--resume DIR] [--victim R] [--timeout-ms T] [--bytes N]
// save:    sharded saves at 10 and 30 batches, save_asyncs at 20 and 40
//          (the store's two slots each taken twice); prints "saved <uuid> x4".
// hang:    as save, but at 20 rank --victim writes half its part, prints
//          "writing" and sleeps (for the test to kill it); the other ranks
//          print "failed: <why>" when the checkpoint fails.
// restore: verifies and reads this rank's part of --resume; prints
//          "restored <uuid> <batches>" when the part holds what `save` wrote,
//          "error: <why>" when the runtime refuses it.
// Exit codes: 0 done, 2 wrong content, 3 an error from the runtime, 4 bad usage, 5 failed as asked.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "ring/trial/checkpoints_sharded.h"
#include "ring/trial/context.h"
#include "ring/trial/kv_store.h"

namespace {

namespace fs = std::filesystem;
using namespace ring::trial;

// What rank r writes at `batches`: distinct per rank and checkpoint.
std::string Content(int rank, int64_t batches, size_t bytes) {
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<char>((i * 131 + rank * 17 + batches) % 251);
  return out;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args = {
      {"--timeout-ms", "30000"}, {"--bytes", "1048576"}, {"--victim", "-1"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  for (const char* required : {"--master", "--root", "--store", "--rank", "--world", "--mode"})
    if (!args.count(required)) {
      std::cerr << "usage: " << argv[0] << " missing " << required << "\n";
      return 4;
    }
  const int rank = std::stoi(args["--rank"]);
  const std::string mode = args["--mode"];
  const size_t bytes = std::stoul(args["--bytes"]);
  Environment env = {{"RING_MASTER_URL", args["--master"]},
                     {"RING_ALLOCATION_ID", "3.0"},
                     {"RING_ALLOCATION_TOKEN", "tok"},
                     {"RING_TRIAL_ID", "3"},
                     {"RING_MAX_LENGTH_BATCHES", "100"},
                     {"RING_API_RETRY_SECONDS", "5"},
                     {"RANK", args["--rank"]},
                     {"WORLD_SIZE", args["--world"]},
                     {"RING_CHECKPOINT_STORAGE", R"({"type":"shared_fs","host_path":")" + args["--root"] +
                                                     R"(","storage_path":"exp"})"}};
  if (args.count("--resume")) env["RING_LATEST_CHECKPOINT"] = args["--resume"];
  try {
    const char* trial_argv[] = {"trial"};
    auto ctx = Context::from_environment(1, trial_argv, env);
    ShardOptions options;
    options.timeout = std::chrono::milliseconds(std::stoll(args["--timeout-ms"]));
    ShardedCheckpoints sharded(ctx.checkpoints(), ctx.rank(), ctx.world_size(), FileStore(args["--store"]),
                               options);
    if (mode == "restore") {
      try {
        auto mine = sharded.latest_verified();
        if (!mine) {
          std::cout << "nothing to restore" << std::endl;
          return 2;
        }
        if (ReadFile(mine->path / "part.bin") != Content(rank, mine->batches, bytes)) {
          std::cout << "rank " << rank << "'s part of " << mine->uuid << " is not what it wrote" << std::endl;
          return 2;
        }
        std::cout << "restored " << mine->uuid << " " << mine->batches << std::endl;
        return 0;
      } catch (const CheckpointError& e) {
        std::cout << "error: " << e.what() << std::endl;
        return 3;
      }
    }
    const std::string first = sharded.save(10, [&](const fs::path& dir) {
      std::ofstream(dir / "part.bin", std::ios::binary) << Content(rank, 10, bytes);
    });
    const bool victim = mode == "hang" && rank == std::stoi(args["--victim"]);
    sharded.save_async(20, [&] {
      std::string copy = Content(rank, 20, bytes);
      return Checkpoints::Writer([copy = std::move(copy), victim](const fs::path& dir) {
        std::ofstream out(dir / "part.bin", std::ios::binary);
        if (victim) {
          out.write(copy.data(), static_cast<std::streamsize>(copy.size() / 2));
          out.flush();
          std::cout << "writing" << std::endl;
          std::this_thread::sleep_for(std::chrono::seconds(120));
        }
        out << copy;
      });
    });
    try {
      const auto second = sharded.wait();
      const std::string third = sharded.save(30, [&](const fs::path& dir) {
        std::ofstream(dir / "part.bin", std::ios::binary) << Content(rank, 30, bytes);
      });
      sharded.save_async(40, [&] {
        std::string copy = Content(rank, 40, bytes);
        return Checkpoints::Writer([copy = std::move(copy)](const fs::path& dir) {
          std::ofstream(dir / "part.bin", std::ios::binary) << copy;
        });
      });
      const auto fourth = sharded.wait();
      std::cout << "saved " << first << " " << second.value_or("none") << " " << third << " "
                << fourth.value_or("none") << std::endl;
      return 0;
    } catch (const CheckpointError& e) {
      std::cout << "failed: " << e.what() << std::endl;
      return mode == "hang" ? 5 : 3;
    }
  } catch (const std::exception& e) {
    std::cout << "error: " << e.what() << std::endl;
    return 3;
  }
}
