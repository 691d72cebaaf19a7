#pragma once
// Names of types and operations for messages, and the argument checks every
// backend makes before it communicates (so a bad call leaves the group usable
// and fails the same way on every backend).
#include <cstddef>
#include <string>

#include "ring/trial/distributed.h"

namespace ring::trial::detail {

const char* DataTypeName(DataType type);  // "float32"
const char* ReduceOpName(ReduceOp op);    // "sum"

// Throw ConfigError: an unknown type or op, kAverage of an integer type, a root outside the group,
// a null buffer with a non-zero count.
void CheckReduce(DataType type, ReduceOp op);
void CheckRoot(int root, int size);
void CheckBuffer(const void* data, size_t count, const char* what);
// Throws ConfigError unless the timeout is positive (Gloo reads 0 as "never").
void CheckTimeout(Timeout timeout, const char* what);

}  // namespace ring::trial::detail
