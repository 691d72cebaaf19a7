// Shells: tasks whose one rank is a login shell in a pseudo-terminal
// (docs/interactive.md "Shells"). Their routes are the task routes of
// tasks_api.cc at /api/v1/shells; here is who may open a shell's terminal,
// the WebSocket at /api/v1/shells/{id}/terminal: a signed-in user who owns
// the shell, or an admin, while its allocation runs: on one of our agents,
// or on a Slurm pool through the job agent of its node.
// The user is the bearer token's (the CLI) or a one-time ticket's (a
// browser, which cannot put a token on a WebSocket: it asks for a ticket at
// POST /api/v1/shells/{id}/terminal/ticket first). An allocation token is
// no user's and opens none.
#include "master/api/shells_api.h"

#include <utility>  // before Asio

#include <boost/beast/http/field.hpp>

#include "master/api/routes.h"
#include "master/auth/accounts.h"
#include "master/auth/terminal_tickets.h"
#include "master/http/url_codec.h"
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

// The ?ticket= of a target, or "".
std::string TicketOf(std::string_view target) {
  const size_t query = target.find('?');
  if (query == std::string_view::npos) return "";
  auto pairs = ParseQuery(target.substr(query + 1));
  if (!pairs) return "";
  auto it = pairs->find("ticket");
  return it == pairs->end() ? "" : it->second;
}

// Shell `id`, when `principal` may open it and it has not ended: kNotFound
// for no such shell, kPermissionDenied naming its owner, kConflict once over.
Result<TaskRecord> OpenableShell(Store& store, const Principal& principal, int64_t id) {
  auto task = store.GetTask(id);
  if (!task.ok() || task->kind != TaskKind::kShell)
    return NotFound("shell " + std::to_string(id) + " not found");
  if (!principal.Manages(task->owner))
    return Status(ErrorCode::kPermissionDenied, "shell " + std::to_string(id) + " belongs to " + task->owner +
                                                    "; only its owner or an admin may open it");
  if (!task->ended_at.empty()) return Conflict("shell " + std::to_string(id) + " has ended");
  return task;
}

// The user of a ticket for shell `id`, checked again now: the ticket is
// used up whatever the answer.
Result<Principal> TicketHolder(Store& store, TerminalTickets& tickets, const std::string& ticket,
                               int64_t id) {
  auto grant = tickets.Redeem(ticket, TerminalTickets::Clock::now());
  if (!grant.ok()) return grant.status();
  if (grant->task_id != id)
    return Status(ErrorCode::kPermissionDenied, "this ticket opens the terminal of shell " +
                                                    std::to_string(grant->task_id) + ", not of shell " +
                                                    std::to_string(id));
  auto user = store.GetUserByName(grant->username);
  if (!user.ok()) return Status(ErrorCode::kUnauthenticated, "user " + grant->username + " no longer exists");
  if (!user->active)
    return Status(ErrorCode::kUnauthenticated, "user " + grant->username + " is deactivated");
  return Principal{user->id, user->username, user->role};
}

// Who opens shell `id`'s terminal: the bearer token's user, or without an
// Authorization header the ?ticket='s (used up here).
Result<Principal> WhoOpens(const boost::beast::http::request<boost::beast::http::string_body>& request,
                           int64_t id, Store& store, Accounts& accounts, TerminalTickets& tickets) {
  const std::string_view authorization = request[boost::beast::http::field::authorization];
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.empty()) {
    if (authorization.substr(0, kBearer.size()) != kBearer)
      return Status(ErrorCode::kUnauthenticated, "sign in first: the terminal takes a bearer token");
    return accounts.Authenticate(std::string(authorization.substr(kBearer.size())));
  }
  if (const std::string ticket = TicketOf(request.target()); !ticket.empty())
    return TicketHolder(store, tickets, ticket, id);
  return Status(ErrorCode::kUnauthenticated,
                "sign in first: the terminal takes a bearer token, or a ticket from POST "
                "/api/v1/shells/" +
                    std::to_string(id) + "/terminal/ticket in ?ticket=");
}

ApiResponse IssueTicket(ApiContext& ctx, ApiRequest& req) {
  if (!ctx.terminal_tickets) return ApiResponse::Error(Unavailable("this master issues no terminal tickets"));
  auto id = ParseId(req.params[0], "shell id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto shell = OpenableShell(ctx.store, *req.principal, *id);
  if (!shell.ok()) return ApiResponse::Error(shell.status());
  auto ticket = ctx.terminal_tickets->Issue({*id, req.principal->username}, TerminalTickets::Clock::now());
  if (!ticket.ok()) return ApiResponse::Error(ticket.status());
  ApiResponse answer =
      ApiResponse::Json({{"ticket", *ticket}, {"expires_in_s", ctx.terminal_tickets->options().ttl.count()}});
  answer.headers.emplace_back("Cache-Control", "no-store");
  return answer;
}

}  // namespace

bool IsShellTerminalTarget(std::string_view target) {
  return target.substr(0, kPrefix.size()) == kPrefix;
}

TerminalWsAcceptor::Admitter MakeShellTerminalAdmitter(Store& store, Accounts& accounts,
                                                       TerminalTickets& tickets, const RoutingRm* routing) {
  return [&store, &accounts, &tickets, routing](
             const boost::beast::http::request<boost::beast::http::string_body>& request,
             const std::string&) -> Result<TerminalAdmission> {
    const int64_t id = ShellIdOf(request.target());
    if (id == 0) return NotFound("no WebSocket endpoint at " + std::string(request.target()));
    auto principal = WhoOpens(request, id, store, accounts, tickets);
    if (!principal.ok()) return principal.status();
    auto task = OpenableShell(store, *principal, id);
    if (!task.ok()) return task.status();
    auto allocations = store.ListTaskAllocations(id);
    if (!allocations.ok()) return allocations.status();
    if (allocations->empty()) return Conflict("shell " + std::to_string(id) + " has ended");
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

void RegisterShellTerminalRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("POST", "/api/v1/shells/{id}/terminal/ticket", Access::kUser,
                 [&ctx](ApiRequest& req) { return IssueTicket(ctx, req); });
}

}  // namespace ring
