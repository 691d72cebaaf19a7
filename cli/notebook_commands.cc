#include "cli/notebook_commands.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "cli/format.h"

extern char** environ;

namespace ring::cli {
namespace {

bool Serving(const nlohmann::json& notebook) {
  return Field(notebook, "state") == "RUNNING" && Member(notebook, "service").is_object();
}

// Hands `url` to the desktop's browser (xdg-open) when there is a desktop
// and stdout is a terminal; a script reads the link from stdout instead.
void OpenInBrowser(const std::string& url) {
  if (!::isatty(1) || (std::getenv("DISPLAY") == nullptr && std::getenv("WAYLAND_DISPLAY") == nullptr))
    return;
  pid_t pid = 0;
  const char* argv[] = {"xdg-open", url.c_str(), nullptr};
  if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0)
    ::waitpid(pid, nullptr, 0);
}

}  // namespace

int OpenNotebook(CliEnv& env, int64_t id) {
  auto notebook = env.master.Get("/api/v1/notebooks/" + std::to_string(id));
  if (!notebook.ok()) return env.Fail(notebook.status());
  if (!Member(*notebook, "ended_at").is_null())
    return env.Fail(
        Conflict("notebook " + std::to_string(id) + " has ended: " + Field(*notebook, "exit_reason")));
  if (!Serving(*notebook))
    return env.Fail(Conflict("notebook " + std::to_string(id) + " is not serving yet (" +
                             Field(*notebook, "state") + "); ring notebook list shows when it is"));
  auto link =
      env.master.Post("/api/v1/tasks/" + std::to_string(id) + "/proxy/link", nlohmann::json::object());
  if (!link.ok()) return env.Fail(link.status());
  if (env.json) {
    env.out << link->dump(2) << '\n';
    return kExitOk;
  }
  const std::string url = Field(*link, "url");
  env.out << url << '\n';
  env.err << "Opens notebook " << id << " once, within " << Field(*link, "expires_in_seconds")
          << " s; ring notebook open " << id << " makes another.\n";
  OpenInBrowser(url);
  return kExitOk;
}

int StartNotebook(CliEnv& env, const TaskRunOptions& options) {
  return StartTask(env, "notebooks", "Notebook", options, Serving,
                   [&env](int64_t id) { return OpenNotebook(env, id); });
}

}  // namespace ring::cli
