// The "single" backend: a group of one rank. Every collective checks its
// arguments like the others do and returns at once (allgather and reduce_scatter copy).
#include <cstring>

#include "distributed/backend.h"
#include "distributed/collective_args.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "single"; }
  bool allreduce_order_fixed() const override { return true; }

  void allreduce(void* data, size_t count, DataType type, ReduceOp op, Timeout timeout) override {
    CheckTimeout(timeout, "allreduce");
    CheckReduce(type, op);
    CheckBuffer(data, count, "allreduce");
  }
  void broadcast(void* data, size_t count, DataType type, int root, Timeout timeout) override {
    CheckTimeout(timeout, "broadcast");
    SizeOf(type);
    CheckRoot(root, 1);
    CheckBuffer(data, count, "broadcast");
  }
  void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                      Timeout timeout) override {
    CheckTimeout(timeout, "reduce_scatter");
    CheckReduce(type, op);
    CheckBuffer(in, count, "reduce_scatter");
    CheckBuffer(out, count, "reduce_scatter");
    if (count > 0 && in != out) std::memmove(out, in, count * SizeOf(type));
  }
  void allgather(const void* in, void* out, size_t count, DataType type, Timeout timeout) override {
    CheckTimeout(timeout, "allgather");
    SizeOf(type);
    CheckBuffer(in, count, "allgather");
    CheckBuffer(out, count, "allgather");
    if (count > 0 && in != out) std::memmove(out, in, count * SizeOf(type));
  }
  void barrier(Timeout timeout) override { CheckTimeout(timeout, "barrier"); }
};

}  // namespace

std::unique_ptr<ProcessGroup> ConnectSingle(const GroupPlan& plan) {
  if (plan.self.world_size != 1)
    throw ConfigError("the single backend is for a world size of 1, not " +
                      std::to_string(plan.self.world_size) + " (use auto or gloo)");
  return std::make_unique<SingleProcessGroup>();
}

}  // namespace ring::trial::detail
