#pragma once
// A set of integers in [0, capacity), ordered, as a bitset with one summary
// bit per 64-bit word: insert, erase and membership cost O(1), the next
// member at or after (or at or before) a value O(capacity / 4096) at worst.
// What a scheduling pass keeps its indexes in (agents by free slots, agents
// by the candidate that reaches them) instead of sorted trees: the pass
// changes them tens of thousands of times and asks mostly for the first
// member. Owned by the index that holds it; not thread-safe.
#include <bit>
#include <cstdint>
#include <vector>

namespace ring::scheduling {

class IndexSet {
 public:
  IndexSet() = default;
  explicit IndexSet(int capacity) { Reset(capacity); }

  // Empties the set and makes room for [0, capacity).
  void Reset(int capacity) {
    capacity_ = capacity;
    size_ = 0;
    words_.assign((static_cast<size_t>(capacity) + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
  }
  int capacity() const { return capacity_; }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(int i) const { return words_[i >> 6] >> (i & 63) & 1; }

  // Returns whether i was not there.
  bool insert(int i) {
    uint64_t& w = words_[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if (w & bit) return false;
    if (w == 0) summary_[i >> 12] |= uint64_t{1} << ((i >> 6) & 63);
    w |= bit;
    ++size_;
    return true;
  }
  // Returns whether i was there.
  bool erase(int i) {
    uint64_t& w = words_[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if (!(w & bit)) return false;
    w &= ~bit;
    if (w == 0) summary_[i >> 12] &= ~(uint64_t{1} << ((i >> 6) & 63));
    --size_;
    return true;
  }

  // The smallest member >= i, or -1.
  int Next(int i) const {
    if (i < 0) i = 0;
    if (i >= capacity_) return -1;
    size_t w = static_cast<size_t>(i) >> 6;
    const uint64_t here = words_[w] & (~uint64_t{0} << (i & 63));
    if (here) return static_cast<int>(w * 64 + std::countr_zero(here));
    ++w;  // the next non-empty word after w
    if (w >= words_.size()) return -1;
    size_t s = w >> 6;
    uint64_t bits = summary_[s] & (~uint64_t{0} << (w & 63));
    while (!bits) {
      if (++s >= summary_.size()) return -1;
      bits = summary_[s];
    }
    const size_t found = s * 64 + std::countr_zero(bits);
    return static_cast<int>(found * 64 + std::countr_zero(words_[found]));
  }
  // The largest member <= i, or -1.
  int Prev(int i) const {
    if (i >= capacity_) i = capacity_ - 1;
    if (i < 0) return -1;
    size_t w = static_cast<size_t>(i) >> 6;
    const int bit = i & 63;
    const uint64_t here = words_[w] & (bit == 63 ? ~uint64_t{0} : (uint64_t{1} << (bit + 1)) - 1);
    if (here) return static_cast<int>(w * 64 + 63 - std::countl_zero(here));
    if (w == 0) return -1;
    --w;  // the last non-empty word before the one of i
    size_t s = w >> 6;
    const int sbit = static_cast<int>(w & 63);
    uint64_t bits = summary_[s] & (sbit == 63 ? ~uint64_t{0} : (uint64_t{1} << (sbit + 1)) - 1);
    while (!bits) {
      if (s == 0) return -1;
      bits = summary_[--s];
    }
    const size_t found = s * 64 + 63 - std::countl_zero(bits);
    return static_cast<int>(found * 64 + 63 - std::countl_zero(words_[found]));
  }
  int First() const { return Next(0); }
  int Last() const { return Prev(capacity_ - 1); }

  // Ascending iteration.
  class Iterator {
   public:
    Iterator(const IndexSet* set, int at) : set_(set), at_(at) {}
    int operator*() const { return at_; }
    Iterator& operator++() {
      at_ = set_->Next(at_ + 1);
      return *this;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    const IndexSet* set_;
    int at_;
  };
  Iterator begin() const { return {this, First()}; }
  Iterator end() const { return {this, -1}; }

 private:
  int capacity_ = 0;
  int size_ = 0;
  std::vector<uint64_t> words_;
  std::vector<uint64_t> summary_;  // bit w: words_[w] != 0
};

}  // namespace ring::scheduling
