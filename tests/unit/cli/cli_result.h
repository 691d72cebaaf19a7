#pragma once
// Runs the CLI in the test's process and keeps what it printed.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/run_cli.h"

namespace ring::cli {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult RunRing(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = RunCli(std::move(args), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace ring::cli
