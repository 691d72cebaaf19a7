#include "cli/workspace_commands.h"

#include <charconv>

#include <CLI/CLI.hpp>

#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {
namespace {
namespace workspace_cli {  // unique within the unity batch

std::optional<int64_t> AsId(const std::string& text) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 1) return std::nullopt;
  return id;
}

int Print(CliEnv& env, const Result<nlohmann::json>& res, const std::string& said) {
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << said << '\n';
  return kExitOk;
}

std::string WorkspacePath(int64_t id) {
  return "/api/v1/workspaces/" + std::to_string(id);
}

std::string ProjectPath(int64_t id) {
  return "/api/v1/projects/" + std::to_string(id);
}

// Runs `then` with the workspace `text` names.
int WithWorkspace(CliEnv& env, const std::string& text, const std::function<int(int64_t)>& then) {
  auto id = ResolveWorkspace(env, text);
  if (!id.ok()) return env.Fail(id.status());
  return then(*id);
}

int WithProject(CliEnv& env, const std::string& text, const std::function<int(int64_t)>& then) {
  auto id = ResolveProject(env, text);
  if (!id.ok()) return env.Fail(id.status());
  return then(*id);
}

int ListWorkspaces(CliEnv& env, const WorkspaceArgs& a) {
  auto res = env.master.Get("/api/v1/workspaces" + (a.archived.empty() ? "" : "?archived=" + a.archived));
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table({"id", "name", "projects", "members", "pools", "archived", "description"});
  for (const auto& w : Member(*res, "workspaces")) {
    std::string pools;
    for (const auto& p : Member(w, "pools"))
      pools += (pools.empty() ? "" : ", ") + GetString(p, "pool") +
               (p.value("default", false) ? " (default)" : "");
    const bool everyone = w.value("default", false);
    table.AddRow({Field(w, "id"), Field(w, "name"), Field(w, "num_projects"),
                  everyone ? "every user" : std::to_string(Member(w, "members").size()),
                  pools.empty() ? "-" : pools, Field(w, "archived"), Field(w, "description")});
  }
  table.Print(env.out);
  return kExitOk;
}

int DescribeWorkspace(CliEnv& env, int64_t id) {
  auto w = env.master.Get(WorkspacePath(id));
  if (!w.ok()) return env.Fail(w.status());
  auto projects = env.master.Get(WorkspacePath(id) + "/projects");
  if (!projects.ok()) return env.Fail(projects.status());
  if (env.json) {
    env.out << nlohmann::json{{"workspace", *w}, {"projects", Member(*projects, "projects")}}.dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Workspace " << id << ": " << Field(*w, "name")
          << (w->value("archived", false) ? " (archived)" : "")
          << "\nDescription: " << Field(*w, "description") << "\nCreated by:  " << Field(*w, "created_by")
          << "\n\nMembers:\n";
  if (w->value("default", false)) {
    env.out << "  every user\n";
  } else {
    Table members({"username", "role"});
    for (const auto& m : Member(*w, "members")) members.AddRow({Field(m, "username"), Field(m, "role")});
    members.Print(env.out);
  }
  env.out << "\nPools:\n";
  Table pools({"pool", "default"});
  for (const auto& p : Member(*w, "pools")) pools.AddRow({Field(p, "pool"), Field(p, "default")});
  pools.Print(env.out);
  env.out << "\nProjects:\n";
  Table table({"id", "name", "experiments", "archived", "created by", "description"});
  for (const auto& p : Member(*projects, "projects"))
    table.AddRow({Field(p, "id"), Field(p, "name"), Field(p, "num_experiments"), Field(p, "archived"),
                  Field(p, "created_by"), Field(p, "description")});
  table.Print(env.out);
  return kExitOk;
}

int ListProjects(CliEnv& env, int64_t workspace) {
  auto res = env.master.Get(WorkspacePath(workspace) + "/projects");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table({"id", "workspace", "name", "experiments", "archived", "created by", "description"});
  for (const auto& p : Member(*res, "projects"))
    table.AddRow({Field(p, "id"), Field(p, "workspace"), Field(p, "name"), Field(p, "num_experiments"),
                  Field(p, "archived"), Field(p, "created_by"), Field(p, "description")});
  table.Print(env.out);
  return kExitOk;
}

int DescribeProject(CliEnv& env, int64_t id) {
  auto p = env.master.Get(ProjectPath(id));
  if (!p.ok()) return env.Fail(p.status());
  if (env.json) {
    env.out << p->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Project " << id << ": " << Field(*p, "workspace") << "/" << Field(*p, "name")
          << (p->value("archived", false) ? " (archived)" : "")
          << "\nDescription: " << Field(*p, "description") << "\nCreated by:  " << Field(*p, "created_by")
          << "\nExperiments: " << Field(*p, "num_experiments") << "\n(ring experiment list --project " << id
          << ")\n";
  return kExitOk;
}

// The body of an edit: the --name and --description given.
Result<nlohmann::json> EditBody(const WorkspaceArgs& a) {
  nlohmann::json body = nlohmann::json::object();
  if (a.new_name) body["name"] = *a.new_name;
  if (a.new_description) body["description"] = *a.new_description;
  if (body.empty()) return InvalidArgument("give --name, --description or both");
  return body;
}

void AddWorkspace(CLI::App& app, WorkspaceArgs& a, std::function<int(CliEnv&)>& action) {
  auto* ws = app.add_subcommand("workspace", "Workspaces: members, bound pools and projects");
  ws->require_subcommand(1);
  auto ws_arg = [&](CLI::App* cmd) {
    cmd->add_option("WORKSPACE", a.workspace, "Workspace id or name")->required();
  };
  auto* create = ws->add_subcommand("create", "Create a workspace (admins); you become its ADMIN");
  create->add_option("NAME", a.name, "Workspace name (unique)")->required();
  create->add_option("--description", a.description, "What it is for");
  create->callback([&] {
    action = [&](CliEnv& env) {
      nlohmann::json body{{"name", a.name}, {"description", a.description}};
      auto res = env.master.Post("/api/v1/workspaces", body);
      return Print(env, res,
                   "Workspace " + (res.ok() ? Field(*res, "id") : "") + " (" + a.name + ") created");
    };
  });
  auto* list = ws->add_subcommand("list", "List the workspaces you belong to (admins: all)");
  list->add_option("--archived", a.archived, "Only archived (true) or unarchived (false) ones")
      ->check(CLI::IsMember({"true", "false"}));
  list->callback([&] { action = [&](CliEnv& env) { return ListWorkspaces(env, a); }; });
  auto* describe = ws->add_subcommand("describe", "Show a workspace, its members, pools and projects");
  ws_arg(describe);
  describe->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) { return DescribeWorkspace(env, id); });
    };
  });
  auto* edit =
      ws->add_subcommand("edit", "Rename a workspace or change its description (its ADMINs, admins)");
  ws_arg(edit);
  edit->add_option("--name", a.new_name, "Its new name (unique)");
  edit->add_option("--description", a.new_description, "Its new description");
  edit->callback([&] {
    action = [&](CliEnv& env) {
      auto body = EditBody(a);
      if (!body.ok()) return env.Fail(body.status());
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(env, env.master.Patch(WorkspacePath(id), *body),
                     "Workspace " + std::to_string(id) + " changed");
      });
    };
  });
  for (const bool archive : {true, false}) {
    auto* cmd = ws->add_subcommand(
        archive ? "archive" : "unarchive",
        archive ? "Archive a workspace: no new projects or experiments" : "Unarchive a workspace");
    ws_arg(cmd);
    cmd->callback([&, archive] {
      action = [&, archive](CliEnv& env) {
        return WithWorkspace(env, a.workspace, [&](int64_t id) {
          return Print(env, env.master.Patch(WorkspacePath(id), {{"archived", archive}}),
                       "Workspace " + std::to_string(id) + (archive ? " archived" : " unarchived"));
        });
      };
    });
  }
  auto* del =
      ws->add_subcommand("delete", "Delete a workspace and its projects, once they hold no experiments");
  ws_arg(del);
  del->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(env, env.master.Delete(WorkspacePath(id)),
                     "Workspace " + std::to_string(id) + " deleted");
      });
    };
  });
  auto* member = ws->add_subcommand("member", "Add or remove a workspace's members");
  member->require_subcommand(1);
  auto* add = member->add_subcommand("add", "Add a member, or change their role");
  ws_arg(add);
  add->add_option("USERNAME", a.username, "The user")->required();
  add->add_option("--role", a.role, "MEMBER (default) or ADMIN")
      ->check(CLI::IsMember({"MEMBER", "ADMIN", "member", "admin"}));
  add->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(
            env,
            env.master.Put(WorkspacePath(id) + "/members/" + PercentEncode(a.username), {{"role", a.role}}),
            a.username + " is a member of workspace " + std::to_string(id));
      });
    };
  });
  auto* remove = member->add_subcommand("remove", "Remove a member");
  ws_arg(remove);
  remove->add_option("USERNAME", a.username, "The user")->required();
  remove->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(env, env.master.Delete(WorkspacePath(id) + "/members/" + PercentEncode(a.username)),
                     a.username + " removed from workspace " + std::to_string(id));
      });
    };
  });
  auto* pool = ws->add_subcommand("pool", "Bind resource pools to a workspace: its members may submit there");
  pool->require_subcommand(1);
  auto* bind = pool->add_subcommand(
      "bind", "Bind a pool (--default: where members' experiments go when the config names none)");
  ws_arg(bind);
  bind->add_option("POOL", a.pool, "Resource pool")->required();
  bind->add_flag("--default", a.is_default, "Make it the workspace's default pool");
  bind->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(env,
                     env.master.Put(WorkspacePath(id) + "/pools/" + PercentEncode(a.pool),
                                    {{"default", a.is_default}}),
                     "Pool " + a.pool + " bound to workspace " + std::to_string(id) +
                         (a.is_default ? " (default)" : ""));
      });
    };
  });
  auto* unbind = pool->add_subcommand("unbind", "Unbind a pool");
  ws_arg(unbind);
  unbind->add_option("POOL", a.pool, "Resource pool")->required();
  unbind->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        return Print(env, env.master.Delete(WorkspacePath(id) + "/pools/" + PercentEncode(a.pool)),
                     "Pool " + a.pool + " unbound from workspace " + std::to_string(id));
      });
    };
  });
}

void AddProject(CLI::App& app, CLI::App& experiment, WorkspaceArgs& a, std::function<int(CliEnv&)>& action) {
  auto* project = app.add_subcommand("project", "Projects: where experiments are kept, inside a workspace");
  project->require_subcommand(1);
  auto project_arg = [&](CLI::App* cmd) {
    cmd->add_option("PROJECT", a.project, "Project id or WORKSPACE/PROJECT")->required();
  };
  auto* create = project->add_subcommand("create", "Create a project in a workspace you belong to");
  create->add_option("WORKSPACE", a.workspace, "Workspace id or name")->required();
  create->add_option("NAME", a.name, "Project name (unique in the workspace)")->required();
  create->add_option("--description", a.description, "What it is for");
  create->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) {
        auto res = env.master.Post(WorkspacePath(id) + "/projects",
                                   {{"name", a.name}, {"description", a.description}});
        return Print(env, res,
                     "Project " + (res.ok() ? Field(*res, "id") : "") + " (" + a.name + ") created");
      });
    };
  });
  auto* list = project->add_subcommand("list", "List a workspace's projects");
  list->add_option("WORKSPACE", a.workspace, "Workspace id or name")->required();
  list->callback([&] {
    action = [&](CliEnv& env) {
      return WithWorkspace(env, a.workspace, [&](int64_t id) { return ListProjects(env, id); });
    };
  });
  auto* describe = project->add_subcommand("describe", "Show a project");
  project_arg(describe);
  describe->callback([&] {
    action = [&](CliEnv& env) {
      return WithProject(env, a.project, [&](int64_t id) { return DescribeProject(env, id); });
    };
  });
  auto* edit = project->add_subcommand(
      "edit", "Rename a project or change its description (its creator, ADMINs, admins)");
  project_arg(edit);
  edit->add_option("--name", a.new_name, "Its new name (unique in its workspace)");
  edit->add_option("--description", a.new_description, "Its new description");
  edit->callback([&] {
    action = [&](CliEnv& env) {
      auto body = EditBody(a);
      if (!body.ok()) return env.Fail(body.status());
      return WithProject(env, a.project, [&](int64_t id) {
        return Print(env, env.master.Patch(ProjectPath(id), *body),
                     "Project " + std::to_string(id) + " changed");
      });
    };
  });
  for (const bool archive : {true, false}) {
    auto* cmd =
        project->add_subcommand(archive ? "archive" : "unarchive",
                                archive ? "Archive a project: no new experiments" : "Unarchive a project");
    project_arg(cmd);
    cmd->callback([&, archive] {
      action = [&, archive](CliEnv& env) {
        return WithProject(env, a.project, [&](int64_t id) {
          return Print(env, env.master.Patch(ProjectPath(id), {{"archived", archive}}),
                       "Project " + std::to_string(id) + (archive ? " archived" : " unarchived"));
        });
      };
    });
  }
  auto* del = project->add_subcommand("delete", "Delete a project that holds no experiments");
  project_arg(del);
  del->callback([&] {
    action = [&](CliEnv& env) {
      return WithProject(env, a.project, [&](int64_t id) {
        return Print(env, env.master.Delete(ProjectPath(id)), "Project " + std::to_string(id) + " deleted");
      });
    };
  });
  auto* move = experiment.add_subcommand("move", "Move an experiment to another project");
  move->add_option("ID", a.experiment, "Experiment id")->required()->check(CLI::PositiveNumber);
  move->add_option("--project", a.project, "Project id or WORKSPACE/PROJECT")->required();
  move->callback([&] {
    action = [&](CliEnv& env) {
      return WithProject(env, a.project, [&](int64_t id) {
        auto res = env.master.Post("/api/v1/experiments/" + std::to_string(a.experiment) + "/move",
                                   {{"project_id", id}});
        return Print(env, res,
                     "Experiment " + std::to_string(a.experiment) + " moved to " +
                         (res.ok() ? Field(*res, "workspace") + "/" + Field(*res, "project") : ""));
      });
    };
  });
}

}  // namespace workspace_cli
}  // namespace

using namespace workspace_cli;

Result<int64_t> ResolveWorkspace(CliEnv& env, const std::string& text) {
  if (auto id = AsId(text)) return *id;
  auto res = env.master.Get("/api/v1/workspaces");
  if (!res.ok()) return res.status();
  for (const auto& w : Member(*res, "workspaces"))
    if (GetString(w, "name") == text) return GetInt(w, "id");
  return NotFound("no workspace named \"" + text + "\" that you belong to (ring workspace list)");
}

Result<int64_t> ResolveProject(CliEnv& env, const std::string& text) {
  if (auto id = AsId(text)) return *id;
  const auto slash = text.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
    return InvalidArgument("a project is its id or WORKSPACE/PROJECT, got \"" + text + "\"");
  auto workspace = ResolveWorkspace(env, text.substr(0, slash));
  if (!workspace.ok()) return workspace.status();
  auto res = env.master.Get(WorkspacePath(*workspace) + "/projects");
  if (!res.ok()) return res.status();
  for (const auto& p : Member(*res, "projects"))
    if (GetString(p, "name") == text.substr(slash + 1)) return GetInt(p, "id");
  return NotFound("no project \"" + text.substr(slash + 1) + "\" in workspace \"" + text.substr(0, slash) +
                  "\" (ring project list " + text.substr(0, slash) + ")");
}

void AddWorkspaceCommands(CLI::App& app, CLI::App& experiment, WorkspaceArgs& a,
                          std::function<int(CliEnv&)>& action) {
  AddWorkspace(app, a, action);
  AddProject(app, experiment, a, action);
}

}  // namespace ring::cli
