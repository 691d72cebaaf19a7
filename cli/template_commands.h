#pragma once
// `ring template set|list|describe|delete`: named partial experiment configs
// that `ring experiment create --template NAME` lays its config over.
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int SetTemplate(CliEnv& env, const std::string& name, const std::string& file);
int ListTemplates(CliEnv& env);
int DescribeTemplate(CliEnv& env, const std::string& name);
int DeleteTemplate(CliEnv& env, const std::string& name);

}  // namespace ring::cli
