#pragma once
// The `ring` command line: parses arguments (CLI11) and runs one command.
// Lives in ring_cli_lib so tests call it in-process.
#include <ostream>
#include <string>
#include <vector>

namespace ring::cli {

// `args` are the arguments after the program name. Returns the exit code:
// 0 ok, 1 failure reported by the master (or experiment not COMPLETED),
// 2 usage error, 3 master unreachable. Progress bars go to `err` only when
// it is std::cerr and stderr is a terminal.
int RunCli(std::vector<std::string> args, std::ostream& out, std::ostream& err);

}  // namespace ring::cli

namespace ring {
using cli::RunCli;
}  // namespace ring
