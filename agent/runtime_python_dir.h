#pragma once
// Where the trial runtime's Python folder is (the `ringtrial` module and the
// `determined` package), which the agent puts first on every trial's
// PYTHONPATH so that an installed `determined` package cannot shadow it.
#include <filesystem>
#include <string>

namespace ring {

// Whether `dir` holds the runtime's Python package (determined/__init__.py).
bool IsRuntimePythonDir(const std::filesystem::path& dir);

// The folder found relative to the agent's binary `agent_exe`: the build
// tree's <bin>/../python, else the installed <prefix>/lib/python3.*/
// {dist,site}-packages (newest first); "" when neither holds the package.
std::string FindRuntimePythonDir(const std::filesystem::path& agent_exe);

}  // namespace ring
