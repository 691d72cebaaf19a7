#include "cli/proxy_commands.h"

#include "cli/format.h"

namespace ring::cli {

int ProxyLink(CliEnv& env, int64_t task_id) {
  auto link =
      env.master.Post("/api/v1/tasks/" + std::to_string(task_id) + "/proxy/link", nlohmann::json::object());
  if (!link.ok()) return env.Fail(link.status());
  if (env.json) {
    env.out << link->dump(2) << '\n';
    return kExitOk;
  }
  // The link alone on standard output, for scripts and `xdg-open $(ring task proxy-link 7)`.
  env.out << Field(*link, "url") << '\n';
  const auto& service = Member(*link, "service");
  env.err << "Opens task " << task_id << " at " << Field(*link, "proxy_url") << " once, within "
          << Field(*link, "expires_in_seconds") << " s"
          << (service.is_object() ? "" : "; the task has announced no service yet") << ".\n";
  return kExitOk;
}

}  // namespace ring::cli
