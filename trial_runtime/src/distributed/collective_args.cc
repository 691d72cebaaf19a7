#include "distributed/collective_args.h"

#include "ring/trial/errors.h"

namespace ring::trial {

size_t SizeOf(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat64:
      return 8;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
  }
  throw ConfigError("unknown data type " + std::to_string(static_cast<int>(type)));
}

namespace detail {

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
  }
  return "unknown type";
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAverage:
      return "average";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
  }
  return "unknown op";
}

void CheckReduce(DataType type, ReduceOp op) {
  SizeOf(type);  // a known type
  if (op != ReduceOp::kSum && op != ReduceOp::kAverage && op != ReduceOp::kMin && op != ReduceOp::kMax)
    throw ConfigError("unknown reduce op " + std::to_string(static_cast<int>(op)));
  if (op == ReduceOp::kAverage && (type == DataType::kInt32 || type == DataType::kInt64))
    throw ConfigError(std::string("allreduce: average is for float32 and float64 only, not ") +
                      DataTypeName(type) + " (reduce with sum and divide as you need)");
}

void CheckRoot(int root, int size) {
  if (root < 0 || root >= size)
    throw ConfigError("broadcast: root " + std::to_string(root) + " is not a rank of this group of " +
                      std::to_string(size));
}

void CheckBuffer(const void* data, size_t count, const char* what) {
  if (data == nullptr && count > 0)
    throw ConfigError(std::string(what) + ": the buffer is null but the count is " + std::to_string(count));
}

void CheckTimeout(Timeout timeout, const char* what) {
  if (timeout.count() <= 0)
    throw ConfigError(std::string(what) + ": the timeout must be positive, got " +
                      std::to_string(timeout.count()) + " ms");
}

}  // namespace detail
}  // namespace ring::trial
