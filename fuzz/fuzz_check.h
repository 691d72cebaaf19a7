#pragma once
// What the fuzz targets share: a check that reports a broken property and
// aborts, so libFuzzer records the input as a crash.
#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                           \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: check failed: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                           \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
