#pragma once
// scheduler_bench --incremental (scheduler_bench_incremental.cc).
#include <vector>

#include "bench/scheduler_bench_pool.h"

namespace ring::scheduler_bench {

// For each size (its queue lengths when `pending_given`, else 10,000 and
// 100,000) and case: a kept scheduler's pass after each kind of event,
// timed, checked against a full pass, and printed as tables. Exits with an
// error when the two decide differently.
void RunIncremental(const std::vector<const Case*>& cases, const std::vector<Size>& sizes, bool pending_given,
                    bool quick);

}  // namespace ring::scheduler_bench
