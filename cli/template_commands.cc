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

}  // namespace ring::cli
