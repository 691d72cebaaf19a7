#include "ring/trial/priority_reducer.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

#include "training/compression.h"
#include "training/rank_order_average.h"

namespace ring::trial {
namespace {

using Clock = std::chrono::steady_clock;

std::string Describe(size_t p, const ReducerPiece& piece) {
  return "piece " + std::to_string(p) + " (parameters " + std::to_string(piece.first) + ".." +
         std::to_string(piece.last) + ", " + std::to_string(piece.elements) + " floats)";
}

}  // namespace

namespace detail {

std::vector<ReducerPiece> PlanPieces(const std::vector<size_t>& sizes, size_t piece_bytes) {
  const size_t limit = std::max<size_t>(1, piece_bytes / sizeof(float));
  std::vector<ReducerPiece> pieces;
  ReducerPiece open;
  size_t offset = 0;
  auto close = [&] {
    if (open.elements > 0) pieces.push_back(open);
    open = ReducerPiece{.offset = offset, .elements = 0, .first = 0, .last = 0};
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t n = sizes[i];
    if (n >= limit) {  // a piece of its own, or several equal ones
      close();
      const size_t parts = (n + limit - 1) / limit;
      for (size_t k = 0; k < parts; ++k) {
        const size_t take = n / parts + (k < n % parts ? 1 : 0);
        pieces.push_back(ReducerPiece{.offset = offset, .elements = take, .first = i, .last = i});
        offset += take;
      }
      open.offset = offset;
      continue;
    }
    if (open.elements > 0 && open.elements + n > limit) close();
    if (open.elements == 0) open.first = i;
    open.last = i;
    open.elements += n;
    offset += n;
  }
  close();
  return pieces;
}

}  // namespace detail

// State shared by the training thread and the background thread; every
// mutable field is guarded by mu.
struct PriorityReducer::Worker {
  Worker(ProcessGroup& group, std::span<float> flat, const std::vector<size_t>& sizes,
         const std::vector<ReducerPiece>& pieces, const PriorityReducerOptions& options)
      : group(group),
        flat(flat),
        pieces(pieces),
        options(options),
        single(group.size() == 1),
        first_piece(sizes.size()),
        last_piece(sizes.size()),
        marked(sizes.size(), false),
        marks(sizes.size(), 0),
        sends(pieces.size(), 0),
        pieces_left(sizes.size(), 0),
        piece_marks(pieces.size(), 0),
        ready(pieces.size(), false),
        ready_seq(pieces.size(), 0) {
    for (size_t p = pieces.size(); p-- > 0;)
      for (size_t i = pieces[p].first; i <= pieces[p].last; ++i) first_piece[i] = p;
    for (size_t p = 0; p < pieces.size(); ++p)
      for (size_t i = pieces[p].first; i <= pieces[p].last; ++i) last_piece[i] = p;
    if (options.compression != GradientCompression::kNone && !single) {
      size_t largest = 0;
      for (const auto& piece : pieces) largest = std::max(largest, piece.elements);
      words = (largest + 1) / 2;
      residual.assign(flat.size(), 0.0f);
      packed.assign(2 * words, 0);
      gathered.resize(2 * words * static_cast<size_t>(group.size()));
    }
    if (!single) thread = std::thread([this] { run(); });
  }

  ~Worker() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }

  size_t params_in(size_t p) const { return pieces[p].last - pieces[p].first + 1; }

  // Piece p was reduced (or needs no reduction): its parameters move on.
  void complete_locked(size_t p) {
    ready[p] = false;
    piece_marks[p] = 0;
    ++sends[p];
    for (size_t i = pieces[p].first; i <= pieces[p].last; ++i) --pieces_left[i];
    ++stats.pieces;
  }

  void run() {
    std::vector<int32_t> flags(pieces.size());
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stopping || ready_count > 0; });
      if (stopping) return;
      for (size_t p = 0; p < pieces.size(); ++p) flags[p] = ready[p] ? 1 : 0;
      lock.unlock();
      const auto started = Clock::now();
      std::string error;
      size_t chosen = pieces.size();
      try {
        group.allreduce(flags.data(), flags.size(), DataType::kInt32, ReduceOp::kSum, options.timeout);
        chosen = Choose(flags);
      } catch (const std::exception& e) {
        error = std::string("gradient reducer: agreeing on the next piece failed: ") + e.what();
      }
      const auto agreed = Clock::now();
      lock.lock();
      stats.agree_time += agreed - started;
      if (error.empty()) {
        // The chosen piece may not be ready here yet (no piece was ready on
        // every rank): it will be, since every rank marks every gradient
        // each step.
        cv.wait(lock, [&] { return stopping || ready[chosen]; });
        if (stopping) return;
        for (size_t q = chosen + 1; q < pieces.size(); ++q)
          if (ready[q] && ready_seq[q] < ready_seq[chosen]) {
            ++stats.preemptions;
            break;
          }
        lock.unlock();
        const auto sending = Clock::now();
        try {
          send(pieces[chosen]);
        } catch (const std::exception& e) {
          error =
              "gradient reducer: allreduce of " + Describe(chosen, pieces[chosen]) + " failed: " + e.what();
        }
        const auto sent = Clock::now();
        lock.lock();
        stats.reduce_time += sent - sending;
        if (error.empty()) {
          --ready_count;
          complete_locked(chosen);
        }
      }
      if (!error.empty()) {
        failure = error;
        cv.notify_all();
        return;  // the group is unusable: nothing more is sent
      }
      cv.notify_all();
    }
  }

  // Averages one piece over the group, in place (background thread).
  void send(const ReducerPiece& piece) {
    float* data = flat.data() + piece.offset;
    if (options.compression == GradientCompression::kNone) {
      average(group, data, piece.elements, options.timeout);
      return;
    }
    // 16-bit values travel as pairs in 32-bit words: an allgather only copies them.
    const size_t count = (piece.elements + 1) / 2;
    detail::Compress(options.compression, data, residual.data() + piece.offset, packed.data(),
                     piece.elements);
    if (piece.elements % 2 == 1) packed[piece.elements] = 0;  // an odd count's padding
    group.allgather(packed.data(), gathered.data(), count, DataType::kInt32, options.timeout);
    detail::SumWidened(options.compression, gathered.data(), 2 * count, group.size(),
                       1.0f / static_cast<float>(group.size()), data, piece.elements);
  }

  // The most urgent piece ready on every rank, else the most urgent ready on
  // any (flags: how many ranks have each piece ready).
  size_t Choose(const std::vector<int32_t>& flags) const {
    const auto everywhere = std::find(flags.begin(), flags.end(), group.size());
    if (everywhere != flags.end()) return static_cast<size_t>(everywhere - flags.begin());
    const auto anywhere = std::find_if(flags.begin(), flags.end(), [](int32_t f) { return f > 0; });
    return static_cast<size_t>(anywhere - flags.begin());  // one exists: this rank has one
  }

  void check_index(size_t index, const char* call) const {
    if (index >= marked.size())
      throw ReducerUsageError("gradient reducer: " + std::string(call) + "(" + std::to_string(index) +
                              "): there are only " + std::to_string(marked.size()) + " parameters");
  }

  ProcessGroup& group;
  const std::span<float> flat;
  const std::vector<ReducerPiece>& pieces;
  const PriorityReducerOptions options;
  const bool single;
  std::vector<size_t> first_piece, last_piece;  // per parameter, the pieces it lies in
  // Compression (background thread only): what rounding lost, per element;
  // this rank's 16-bit piece; every rank's.
  size_t words = 0;
  std::vector<float> residual;
  std::vector<uint16_t> packed, gathered;
  detail::RankOrderAverage average;  // background thread only

  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<bool> marked;         // per parameter, marked and not released
  std::vector<uint64_t> marks;      // per parameter, times marked
  std::vector<uint64_t> sends;      // per piece, times reduced (its k-th send: its parameters' k-th marks)
  std::vector<size_t> pieces_left;  // per marked parameter, its pieces not yet reduced
  std::vector<size_t> piece_marks;  // per piece, its parameters marked for its next send
  std::vector<bool> ready;          // per piece, every parameter marked, not yet sent
  std::vector<uint64_t> ready_seq;  // per piece, when it became ready
  size_t ready_count = 0;
  uint64_t sequence = 0;
  std::string failure;
  bool stopping = false;
  PriorityReducerStats stats;
  std::thread thread;  // last: started once everything above exists (none for one rank)
};

PriorityReducer::PriorityReducer(ProcessGroup& group, std::span<float> flat, std::vector<size_t> sizes,
                                 PriorityReducerOptions options) {
  if (sizes.empty()) throw ReducerUsageError("gradient reducer needs at least one gradient");
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 0)
      throw ReducerUsageError("gradient reducer: parameter " + std::to_string(i) + " has no elements");
  const size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  if (flat.data() == nullptr || flat.size() != total)
    throw ReducerUsageError("gradient reducer: the flat buffer has " + std::to_string(flat.size()) +
                            " elements, the parameters " + std::to_string(total));
  if (options.piece_bytes == 0) throw ReducerUsageError("gradient reducer piece_bytes must be at least 1");
  pieces_ = detail::PlanPieces(sizes, options.piece_bytes);
  worker_ = std::make_unique<Worker>(group, flat, sizes, pieces_, options);
}

PriorityReducer::~PriorityReducer() = default;

void PriorityReducer::mark_ready(size_t index) {
  Worker& w = *worker_;
  std::lock_guard lock(w.mu);
  if (!w.failure.empty()) throw CollectiveError(w.failure + " (the reducer is unusable after that)");
  w.check_index(index, "mark_ready");
  if (w.marked[index])
    throw ReducerUsageError("gradient reducer: parameter " + std::to_string(index) +
                            " was marked ready again before its average was released");
  w.marked[index] = true;
  ++w.marks[index];
  w.pieces_left[index] = w.last_piece[index] - w.first_piece[index] + 1;
  bool any = false;
  for (size_t p = w.first_piece[index]; p <= w.last_piece[index]; ++p) {
    if (++w.piece_marks[p] != w.params_in(p)) continue;
    if (w.single) {
      w.complete_locked(p);
      continue;
    }
    w.ready[p] = true;
    w.ready_seq[p] = ++w.sequence;
    ++w.ready_count;
    any = true;
  }
  if (any) w.cv.notify_all();
}

void PriorityReducer::wait(size_t index) {
  Worker& w = *worker_;
  std::unique_lock lock(w.mu);
  w.check_index(index, "wait");
  if (!w.marked[index])
    throw ReducerUsageError("gradient reducer: wait(" + std::to_string(index) +
                            ") for a parameter not marked ready");
  if (w.pieces_left[index] == 0) return;
  // A piece it shares with a parameter not marked yet would never be sent.
  for (size_t p = w.first_piece[index]; p <= w.last_piece[index]; ++p) {
    if (w.sends[p] >= w.marks[index]) continue;
    for (size_t k = w.pieces[p].first; k <= w.pieces[p].last; ++k)
      if (w.marks[k] < w.marks[index])
        throw ReducerUsageError("gradient reducer: wait(" + std::to_string(index) + ") before parameter " +
                                std::to_string(k) + ", which shares piece " + std::to_string(p) +
                                " with it, was marked ready");
  }
  const auto started = Clock::now();
  w.cv.wait(lock, [&] { return w.pieces_left[index] == 0 || !w.failure.empty(); });
  w.stats.wait_time += Clock::now() - started;
  if (w.pieces_left[index] != 0) throw CollectiveError(w.failure);
}

void PriorityReducer::release(size_t index) {
  Worker& w = *worker_;
  std::lock_guard lock(w.mu);
  w.check_index(index, "release");
  if (!w.marked[index] || w.pieces_left[index] != 0)
    throw ReducerUsageError("gradient reducer: release(" + std::to_string(index) +
                            ") before the parameter's average was ready");
  w.marked[index] = false;
}

bool PriorityReducer::marked(size_t index) const {
  std::lock_guard lock(worker_->mu);
  worker_->check_index(index, "marked");
  return worker_->marked[index];
}

PriorityReducerStats PriorityReducer::totals() const {
  std::lock_guard lock(worker_->mu);
  return worker_->stats;
}

}  // namespace ring::trial
