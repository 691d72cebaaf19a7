#include "cli/webhook_commands.h"

#include <cctype>

#include "cli/format.h"
#include "cli/table.h"
#include "cli/workspace_commands.h"

namespace ring::cli {
namespace {

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// "state=COMPLETED, log=/disk full/" for the list.
std::string DescribeTriggers(const nlohmann::json& triggers) {
  std::string out;
  if (!triggers.is_array()) return "-";
  for (const auto& t : triggers) {
    if (!out.empty()) out += ", ";
    const auto& c = Member(t, "condition");
    if (GetString(t, "trigger_type") == "TASK_LOG")
      out += "log=" + GetString(c, "regex");
    else
      out += "state=" + GetString(c, "state");
  }
  return out.empty() ? "-" : out;
}

void PrintDelivery(CliEnv& env, const nlohmann::json& d) {
  env.out << "Delivery " << Field(d, "id") << ": " << Field(d, "state") << " after " << Field(d, "attempts")
          << " attempt(s), last status " << Field(d, "last_status");
  if (!GetString(d, "last_error").empty()) env.out << " (" << GetString(d, "last_error") << ")";
  env.out << '\n';
}

}  // namespace

Result<nlohmann::json> ParseTriggerFlag(const std::string& text) {
  const auto eq = text.find('=');
  const std::string kind = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  if (kind == "state" && !value.empty())
    return nlohmann::json{{"trigger_type", "EXPERIMENT_STATE_CHANGE"},
                          {"condition", {{"state", Upper(value)}}}};
  if (kind == "log" && !value.empty())
    return nlohmann::json{{"trigger_type", "TASK_LOG"}, {"condition", {{"regex", value}}}};
  return InvalidArgument("--trigger must be state=STATE (COMPLETED, ERROR, ...) or log=REGEX, got \"" + text +
                         "\"");
}

int CreateWebhook(CliEnv& env, const WebhookCreateOptions& options) {
  nlohmann::json triggers = nlohmann::json::array();
  for (const auto& flag : options.triggers) {
    auto t = ParseTriggerFlag(flag);
    if (!t.ok()) return env.Fail(t.status());
    triggers.push_back(*t);
  }
  if (triggers.empty())
    return env.Fail(InvalidArgument("give at least one --trigger state=STATE or --trigger log=REGEX"));
  nlohmann::json body{
      {"name", options.name}, {"url", options.url}, {"type", Upper(options.type)}, {"triggers", triggers}};
  if (!options.workspace.empty()) {
    auto workspace = ResolveWorkspace(env, options.workspace);
    if (!workspace.ok()) return env.Fail(workspace.status());
    body["workspace_id"] = *workspace;
  }
  auto res = env.master.Post("/api/v1/webhooks", body);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Webhook " << Field(*res, "id") << " (" << Field(*res, "name") << ") created for "
          << DescribeTriggers(Member(*res, "triggers"));
  if (!GetString(*res, "workspace").empty())
    env.out << " of experiments in workspace " << GetString(*res, "workspace");
  env.out << ".\n"
          << "Signing secret (shown once; the master keeps it): " << Field(*res, "secret") << '\n';
  return kExitOk;
}

int ListWebhooks(CliEnv& env, const std::string& workspace) {
  std::string path = "/api/v1/webhooks";
  if (!workspace.empty()) {
    auto id = ResolveWorkspace(env, workspace);
    if (!id.ok()) return env.Fail(id.status());
    path += "?workspace_id=" + std::to_string(*id);
  }
  auto res = env.master.Get(path);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& list = Member(*res, "webhooks");
  if (!list.is_array() || list.empty()) {
    env.out << "No webhooks.\n";
    return kExitOk;
  }
  Table table({"id", "name", "type", "url", "triggers", "workspace", "created by"});
  for (const auto& w : list) {
    const std::string scope = GetString(w, "workspace");
    table.AddRow({Field(w, "id"), Field(w, "name"), Field(w, "type"), Field(w, "url"),
                  DescribeTriggers(Member(w, "triggers")), scope.empty() ? "(cluster-wide)" : scope,
                  Field(w, "created_by")});
  }
  table.Print(env.out);
  return kExitOk;
}

int DeleteWebhook(CliEnv& env, int64_t id) {
  auto res = env.master.Delete("/api/v1/webhooks/" + std::to_string(id));
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << "Webhook " << id << " deleted\n";
  return kExitOk;
}

int TestWebhook(CliEnv& env, int64_t id) {
  auto res = env.master.Post("/api/v1/webhooks/" + std::to_string(id) + "/test", nlohmann::json::object());
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    PrintDelivery(env, *res);
  return GetString(*res, "state") == "DELIVERED"
             ? kExitOk
             : env.Fail(Status(ErrorCode::kUnavailable, "the test event was not delivered"));
}

int ListWebhookDeliveries(CliEnv& env, int64_t id) {
  auto res = env.master.Get("/api/v1/webhooks/" + std::to_string(id) + "/deliveries");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& list = Member(*res, "deliveries");
  if (!list.is_array() || list.empty()) {
    env.out << "No deliveries.\n";
    return kExitOk;
  }
  Table table({"id", "event", "state", "attempts", "last status", "created", "last error"});
  for (const auto& d : list)
    table.AddRow({Field(d, "id"), Field(d, "event_type"), Field(d, "state"), Field(d, "attempts"),
                  Field(d, "last_status"), Field(d, "created_at"), GetString(d, "last_error")});
  table.Print(env.out);
  return kExitOk;
}

void AddWebhookCommands(CLI::App& app, WebhookArgs& a, std::function<int(CliEnv&)>& action) {
  auto* hook = app.add_subcommand("webhook", "Create, list, delete and test webhooks");
  hook->require_subcommand(1);
  auto id_arg = [&](CLI::App* cmd) {
    cmd->add_option("ID", a.id, "Webhook id")->required()->check(CLI::PositiveNumber);
  };
  auto* create = hook->add_subcommand(
      "create", "Create webhook NAME posting to URL (admins; a workspace's admins with --workspace)");
  create->add_option("NAME", a.create.name, "Webhook name (A-Z a-z 0-9 . _ -)")->required();
  create->add_option("URL", a.create.url, "Where to post; must be on master.yaml's webhooks.allowed_urls")
      ->required();
  create->add_option("--type", a.create.type, "default (a JSON event) or slack (a Slack message)")
      ->check(CLI::IsMember({"default", "slack", "DEFAULT", "SLACK"}));
  create
      ->add_option("--trigger", a.create.triggers,
                   "state=STATE (an experiment reaching COMPLETED, ERROR, CANCELED, ...) or log=REGEX (a "
                   "trial's log line matching it); repeat for more")
      ->required();
  create->add_option("--workspace", a.create.workspace,
                     "Only experiments of this workspace (id or name); its admins may create it");
  create->callback([&] { action = [&](CliEnv& env) { return CreateWebhook(env, a.create); }; });
  auto* list = hook->add_subcommand("list", "List the webhooks you see (without their secrets)");
  list->add_option("--workspace", a.workspace, "Only this workspace's webhooks (id or name)");
  list->callback([&] { action = [&](CliEnv& env) { return ListWebhooks(env, a.workspace); }; });
  auto* del = hook->add_subcommand("delete", "Delete a webhook and its deliveries (its managers)");
  id_arg(del);
  del->callback([&] { action = [&](CliEnv& env) { return DeleteWebhook(env, a.id); }; });
  auto* test = hook->add_subcommand("test", "Send a test event now and print its outcome (its managers)");
  id_arg(test);
  test->callback([&] { action = [&](CliEnv& env) { return TestWebhook(env, a.id); }; });
  auto* deliveries = hook->add_subcommand("deliveries", "A webhook's latest deliveries and their outcomes");
  id_arg(deliveries);
  deliveries->callback([&] { action = [&](CliEnv& env) { return ListWebhookDeliveries(env, a.id); }; });
}

}  // namespace ring::cli
