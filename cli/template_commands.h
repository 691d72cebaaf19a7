#pragma once
// `ring template set|list|describe|delete`: named partial experiment configs
// that `ring experiment create --template NAME` lays its config over.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli_env.h"

namespace ring::cli {

int SetTemplate(CliEnv& env, const std::string& name, const std::string& file);
int ListTemplates(CliEnv& env);
int DescribeTemplate(CliEnv& env, const std::string& name);
int DeleteTemplate(CliEnv& env, const std::string& name);

struct TemplateArgs {
  std::string name;
  std::string file;
};

// Adds `ring template ...` to `app`; the chosen command sets `action`.
void AddTemplateCommands(CLI::App& app, TemplateArgs& a, std::function<int(CliEnv&)>& action);

}  // namespace ring::cli
