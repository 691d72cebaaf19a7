// PortRegistry: one port per allocation, round the range, never the port
// just released while others are free.
#include <gtest/gtest.h>

#include <set>

#include "master/lifecycle/port_registry.h"

namespace ring {
namespace {

TEST(PortRegistryTest, OnePortPerOwnerFromTheStartingPoint) {
  PortRegistry ports(29500, 10, 3);
  EXPECT_EQ(ports.Acquire("1.0"), 29503);
  EXPECT_EQ(ports.Acquire("1.0"), 29503);  // the same owner keeps its port
  EXPECT_EQ(ports.Acquire("2.0"), 29504);
}

TEST(PortRegistryTest, ARestartedAllocationGetsAnotherPort) {
  PortRegistry ports(29500, 10, 0);
  const int first = ports.Acquire("1.0");
  ports.Release("1.0");
  const int second = ports.Acquire("1.1");
  EXPECT_NE(second, first);
  EXPECT_EQ(second, first + 1);
}

TEST(PortRegistryTest, WrapsRoundAndRunsOut) {
  PortRegistry ports(100, 3, 2);
  EXPECT_EQ(ports.Acquire("a"), 102);
  EXPECT_EQ(ports.Acquire("b"), 100);
  EXPECT_EQ(ports.Acquire("c"), 101);
  EXPECT_EQ(ports.Acquire("d"), 0);  // all taken
  ports.Release("b");
  EXPECT_EQ(ports.Acquire("d"), 100);
}

TEST(PortRegistryTest, RandomStartsStayInTheRange) {
  std::set<int> firsts;
  for (int i = 0; i < 50; ++i) {
    PortRegistry ports(29500, 1000);
    const int p = ports.Acquire("1.0");
    EXPECT_GE(p, 29500);
    EXPECT_LT(p, 30500);
    firsts.insert(p);
  }
  EXPECT_GT(firsts.size(), 1u);  // 50 masters do not all start at one port
}

}  // namespace
}  // namespace ring
