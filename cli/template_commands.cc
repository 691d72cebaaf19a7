#include "cli/template_commands.h"

#include <fstream>
#include <sstream>

#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {

int SetTemplate(CliEnv& env, const std::string& name, const std::string& file) {
  std::ifstream in(file);
  if (!in) return env.Fail(InvalidArgument("cannot read " + file));
  std::stringstream text;
  text << in.rdbuf();
  auto res = env.master.Put("/api/v1/templates/" + PercentEncode(name), {{"config", text.str()}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << "Template " << name << " set from " << file << '\n';
  return kExitOk;
}

int ListTemplates(CliEnv& env) {
  auto res = env.master.Get("/api/v1/templates");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& list = Member(*res, "templates");
  if (!list.is_array() || list.empty()) {
    env.out << "No templates.\n";
    return kExitOk;
  }
  Table table({"name", "owner", "updated"});
  for (const auto& t : list) table.AddRow({Field(t, "name"), Field(t, "owner"), Field(t, "updated_at")});
  table.Print(env.out);
  return kExitOk;
}

int DescribeTemplate(CliEnv& env, const std::string& name) {
  auto res = env.master.Get("/api/v1/templates/" + PercentEncode(name));
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << Field(*res, "config");
  return kExitOk;
}

int DeleteTemplate(CliEnv& env, const std::string& name) {
  auto res = env.master.Delete("/api/v1/templates/" + PercentEncode(name));
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << "Template " << name << " deleted\n";
  return kExitOk;
}

void AddTemplateCommands(CLI::App& app, TemplateArgs& a, std::function<int(CliEnv&)>& action) {
  auto* tmpl = app.add_subcommand("template", "Set, list, describe and delete config templates");
  tmpl->require_subcommand(1);
  auto name_arg = [&](CLI::App* cmd, const char* what) { cmd->add_option("NAME", a.name, what)->required(); };
  auto* set = tmpl->add_subcommand("set", "Set template NAME from a YAML file (a partial experiment config)");
  name_arg(set, "Template name (A-Z a-z 0-9 . _ -)");
  set->add_option("FILE", a.file, "YAML file")->required();
  set->callback([&] { action = [&](CliEnv& env) { return SetTemplate(env, a.name, a.file); }; });
  auto* list = tmpl->add_subcommand("list", "List templates");
  list->callback([&] { action = [&](CliEnv& env) { return ListTemplates(env); }; });
  auto* describe = tmpl->add_subcommand("describe", "Print a template's config");
  name_arg(describe, "Template name");
  describe->callback([&] { action = [&](CliEnv& env) { return DescribeTemplate(env, a.name); }; });
  auto* del = tmpl->add_subcommand("delete", "Delete a template (its owner or an admin)");
  name_arg(del, "Template name");
  del->callback([&] { action = [&](CliEnv& env) { return DeleteTemplate(env, a.name); }; });
}

}  // namespace ring::cli
