#pragma once
// ringagent's settings file (`ringagent --config agent.yaml`): the same
// settings as its flags, which override the file. Unknown keys and wrong
// types are errors naming the file, line and key (configs/agent.yaml
// documents every key).
#include <string>

#include "agent/agent_config.h"
#include "common/status.h"

namespace ring {

// Fills `config` (and `log_format`) from the YAML file at `path`.
Status LoadAgentConfigFile(const std::string& path, AgentConfig& config, std::string& log_format);

// The value of --config FILE or --config=FILE in argv, if any (read before
// the flags so that flags override the file).
std::string ConfigFileArgument(int argc, char** argv);

}  // namespace ring
