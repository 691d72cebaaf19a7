// ring: the Ringmaster command-line client. Everything is in RunCli.
#include <iostream>
#include <string>
#include <vector>

#include "cli/run_cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ring::cli::RunCli(std::move(args), std::cout, std::cerr);
}
