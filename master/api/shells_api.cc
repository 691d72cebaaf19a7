// Shells: tasks whose one rank is a login shell in a pseudo-terminal
// (docs/interactive.md "Shells"). Their routes are the task routes of
// tasks_api.cc at /api/v1/shells; here is who may open a shell's terminal,
// the WebSocket at /api/v1/shells/{id}/terminal: a signed-in user (bearer
// token) who owns the shell, or an admin, while its allocation runs: on one
// of our agents, or on a Slurm pool through the job agent of its node. An
// allocation token is no user's and opens none.
#include "master/api/shells_api.h"

#include <utility>  // before Asio

#include <boost/beast/http/field.hpp>

#include "master/auth/accounts.h"
#include "master/rm/routing_rm.h"
#include "master/store/store.h"

namespace ring {

namespace {
constexpr std::string_view kPrefix = "/api/v1/shells/";
constexpr std::string_view kSuffix = "/terminal";

// The id of /api/v1/shells/<id>/terminal[?query], or 0.
int64_t ShellIdOf(std::string_view target) {
  target = target.substr(0, target.find('?'));
  if (target.size() <= kPrefix.size() + kSuffix.size() || target.substr(0, kPrefix.size()) != kPrefix ||
      target.substr(target.size() - kSuffix.size()) != kSuffix)
    return 0;
  const std::string_view digits =
      target.substr(kPrefix.size(), target.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 18) return 0;
  int64_t id = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    id = id * 10 + (c - '0');
  }
  return id;
}
}  // namespace

bool IsShellTerminalTarget(std::string_view target) {
  return target.substr(0, kPrefix.size()) == kPrefix;
}

TerminalWsAcceptor::Admitter MakeShellTerminalAdmitter(Store& store, Accounts& accounts,
                                                       const RoutingRm* routing) {
  return [&store, &accounts, routing](
             const boost::beast::http::request<boost::beast::http::string_body>& request,
             const std::string&) -> Result<TerminalAdmission> {
    const int64_t id = ShellIdOf(request.target());
    if (id == 0) return NotFound("no WebSocket endpoint at " + std::string(request.target()));
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.substr(0, kBearer.size()) != kBearer)
      return Status(ErrorCode::kUnauthenticated, "sign in first: the terminal takes a bearer token");
    auto principal = accounts.Authenticate(std::string(authorization.substr(kBearer.size())));
    if (!principal.ok()) return principal.status();
    auto task = store.GetTask(id);
    if (!task.ok() || task->kind != TaskKind::kShell)
      return NotFound("shell " + std::to_string(id) + " not found");
    if (!principal->Manages(task->owner))
      return Status(ErrorCode::kPermissionDenied, "shell " + std::to_string(id) + " belongs to " +
                                                      task->owner +
                                                      "; only its owner or an admin may open it");
    auto allocations = store.ListTaskAllocations(id);
    if (!allocations.ok()) return allocations.status();
    if (allocations->empty() || !task->ended_at.empty())
      return Conflict("shell " + std::to_string(id) + " has ended");
    const AllocationRecord& a = allocations->back();
    if (a.state != AllocationState::kRunning || a.placements.empty())
      return Conflict("shell " + std::to_string(id) + " is not running yet (" +
                      std::string(ToString(a.state)) + "); open it once it runs");
    std::string agent = a.placements.front().agent_id;
    // On a Slurm pool the node runs no agent of ours: the terminal goes
    // through the job agent that Slurm started there for this allocation.
    if (routing && routing->IsSlurmNode(agent)) {
      const auto job_agent = routing->JobAgentOn(a.id, agent);
      if (!job_agent || !job_agent->connected)
        return Conflict("shell " + std::to_string(id) + ": the agent of its Slurm job on " + agent +
                        " is not connected; open it once it is back");
      agent = job_agent->id;
    }
    return TerminalAdmission{principal->username, agent, a.id, 0, 24, 80};
  };
}

}  // namespace ring
