#pragma once
// CliEnv: what every command gets: output streams, the master client and the
// global flags. Built once by RunCli; CLI thread only.
#include <chrono>
#include <ostream>
#include <string>

#include "cli/master_client.h"

namespace ring::cli {

struct CliEnv {
  std::ostream& out;
  std::ostream& err;
  bool err_is_tty = false;  // progress bars only on a terminal
  bool json = false;        // --json: raw JSON for scripts
  MasterClient& master;
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::seconds unreachable_grace{60};  // how long waits tolerate a master restart

  // Prints "ring: error: <message>" and returns the status's exit code.
  int Fail(const Status& status) const {
    err << "ring: error: " << status.message() << '\n';
    return ExitCodeFor(status);
  }
};

}  // namespace ring::cli
