#pragma once
// FakeThreadGroup: the process group's in-process implementation for unit
// tests. Ranks are threads of the test that meet at a shared rendezvous per
// collective (FakeWorld); it logs every collective, can be slowed down, and
// can fail on demand. float32 only, which is all the gradient reducer and
// BroadcastParameters use.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"

namespace ring::testing {

class FakeWorld {
 public:
  using Contributions = std::shared_ptr<const std::vector<std::vector<char>>>;

  explicit FakeWorld(int size) : size_(size), slots_(size), signatures_(size) {}
  int size() const { return size_; }

  // Every rank's bytes once all ranks arrived with the same signature.
  Contributions exchange(int rank, std::vector<char> bytes, const std::string& signature,
                         trial::Timeout timeout) {
    std::unique_lock lock(mu_);
    if (!broken_.empty()) throw trial::CollectiveError("fake group is broken: " + broken_);
    const uint64_t generation = generation_;
    slots_[rank] = std::move(bytes);
    signatures_[rank] = signature;
    if (++arrived_ == size_) {
      for (const auto& s : signatures_)
        if (s != signatures_[0]) broken_ = "ranks called " + signatures_[0] + " and " + s;
      result_ = std::make_shared<const std::vector<std::vector<char>>>(std::move(slots_));
      slots_.assign(size_, {});
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      if (!broken_.empty()) throw trial::CollectiveError("fake group is broken: " + broken_);
      return result_;
    }
    if (!cv_.wait_for(lock, timeout, [&] { return generation_ != generation || !broken_.empty(); })) {
      broken_ = "rank " + std::to_string(rank) + " timed out in " + signature;
      cv_.notify_all();
    }
    // A collective that completed counts even if the group broke after it.
    if (generation_ == generation) throw trial::CollectiveError("fake group is broken: " + broken_);
    return result_;
  }

  void fail(const std::string& why) {
    std::lock_guard lock(mu_);
    broken_ = why;
    cv_.notify_all();
  }

  // Rank `rank`'s allreduce number `call` (from 0) fails and breaks the group.
  void fail_allreduce(int rank, int call) {
    std::lock_guard lock(mu_);
    fail_rank_ = rank;
    fail_call_ = call;
  }
  bool should_fail(int rank, int call) {
    std::lock_guard lock(mu_);
    return rank == fail_rank_ && call == fail_call_;
  }

  void set_delay(std::chrono::milliseconds delay) { delay_ = delay; }
  std::chrono::milliseconds delay() const { return delay_; }

  void log(std::string event) {
    std::lock_guard lock(log_mu_);
    events_.push_back(std::move(event));
    log_cv_.notify_all();
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(log_mu_);
    return events_;
  }
  bool wait_for_event(const std::string& event, std::chrono::milliseconds timeout) {
    std::unique_lock lock(log_mu_);
    return log_cv_.wait_for(
        lock, timeout, [&] { return std::find(events_.begin(), events_.end(), event) != events_.end(); });
  }

 private:
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> slots_;
  std::vector<std::string> signatures_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  Contributions result_;
  std::string broken_;
  int fail_rank_ = -1;
  int fail_call_ = -1;
  std::atomic<std::chrono::milliseconds> delay_{std::chrono::milliseconds{0}};

  mutable std::mutex log_mu_;
  std::condition_variable log_cv_;
  std::vector<std::string> events_;
};

class FakeThreadGroup final : public trial::ProcessGroup {
 public:
  FakeThreadGroup(std::shared_ptr<FakeWorld> world, int rank) : world_(std::move(world)), rank_(rank) {}
  using trial::ProcessGroup::allgather;
  using trial::ProcessGroup::allreduce;
  using trial::ProcessGroup::broadcast;

  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  std::string backend() const override { return "fake-threads"; }
  // Sums each element over the ranks in rank order, whatever the count.
  bool allreduce_order_fixed() const override { return true; }

  void allreduce(void* data, size_t count, trial::DataType type, trial::ReduceOp op,
                 trial::Timeout timeout) override {
    RequireFloat(type);
    if (op != trial::ReduceOp::kAverage && op != trial::ReduceOp::kSum)
      throw trial::CollectiveError("fake group: sum or average only");
    const int call = allreduce_calls_++;
    const std::string tag = "r" + std::to_string(rank_) + " allreduce ";
    world_->log(tag + "begin " + std::to_string(count));
    if (world_->should_fail(rank_, call)) {
      world_->fail("injected failure in rank " + std::to_string(rank_) + "'s allreduce " +
                   std::to_string(call));
      throw trial::CollectiveError("injected failure");
    }
    std::this_thread::sleep_for(world_->delay());
    auto all = world_->exchange(rank_, Bytes(data, count), "allreduce " + std::to_string(count), timeout);
    auto* out = static_cast<float*>(data);
    for (size_t j = 0; j < count; ++j) {
      float sum = 0;
      for (const auto& c : *all) sum += reinterpret_cast<const float*>(c.data())[j];
      out[j] = op == trial::ReduceOp::kAverage ? sum / static_cast<float>(size()) : sum;
    }
    world_->log(tag + "end " + std::to_string(count));
  }

  void broadcast(void* data, size_t count, trial::DataType type, int root, trial::Timeout timeout) override {
    RequireFloat(type);
    world_->log("r" + std::to_string(rank_) + " broadcast " + std::to_string(count));
    auto all =
        world_->exchange(rank_, rank_ == root ? Bytes(data, count) : std::vector<char>{},
                         "broadcast " + std::to_string(count) + " from " + std::to_string(root), timeout);
    std::memcpy(data, (*all)[root].data(), count * sizeof(float));
  }

  void allgather(const void* in, void* out, size_t count, trial::DataType type,
                 trial::Timeout timeout) override {
    RequireFloat(type);
    auto all = world_->exchange(rank_, Bytes(in, count), "allgather " + std::to_string(count), timeout);
    for (size_t r = 0; r < all->size(); ++r)
      std::memcpy(static_cast<char*>(out) + r * count * sizeof(float), (*all)[r].data(),
                  count * sizeof(float));
  }

  void barrier(trial::Timeout timeout) override { world_->exchange(rank_, {}, "barrier", timeout); }

 private:
  static void RequireFloat(trial::DataType type) {
    if (type != trial::DataType::kFloat32) throw trial::CollectiveError("fake group: float32 only");
  }
  static std::vector<char> Bytes(const void* data, size_t count) {
    const auto* p = static_cast<const char*>(data);
    return std::vector<char>(p, p + count * sizeof(float));
  }

  std::shared_ptr<FakeWorld> world_;
  const int rank_;
  int allreduce_calls_ = 0;
};

// Runs fn(rank, group) on `world_size` threads and waits for all of them.
void RunRanks(const std::shared_ptr<FakeWorld>& world,
              const std::function<void(int, trial::ProcessGroup&)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world->size(); ++r) {
    threads.emplace_back([&, r] {
      FakeThreadGroup group(world, r);
      try {
        fn(r, group);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << " threw: " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace ring::testing
