#pragma once
// REST routes of the master, grouped by resource. Each Register* adds its
// routes to the router; handlers run on the connection's strand.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/task_kind.h"
#include "master/http/api_types.h"
#include "master/http/router.h"

#include <boost/asio/thread_pool.hpp>

namespace ring {

class Store;
class Lifecycle;
class AgentRm;
class RoutingRm;
class Accounts;
class MasterMetrics;
class Retention;
class WorkGate;
class StreamSlots;
class AgentEnrolments;
class TaskProxy;
class TerminalTickets;
struct ExperimentRecord;
struct Reader;
class WebhookDispatcher;
class WebhookSender;

struct ApiContext {
  Store& store;
  Lifecycle& lifecycle;
  AgentRm& agents;  // the agents' resource manager: GET /agents, enable, disable
  std::string version;
  Accounts* accounts = nullptr;  // users and sessions (RegisterAuthRoutes)
  // Where password hashing runs (about 0.1 s each), off the network
  // threads; null runs it in place.
  boost::asio::thread_pool* slow_work = nullptr;
  // For GET /api/v1/master/info.
  std::string db_path;
  int schema_version = 0;
  std::chrono::system_clock::time_point started_at = std::chrono::system_clock::now();
  MasterMetrics* metrics = nullptr;  // GET /metrics; null answers 503
  // POST /api/v1/master/retention runs a pass on `maintenance` (in place when
  // null); null `retention` answers 503.
  Retention* retention = nullptr;
  boost::asio::thread_pool* maintenance = nullptr;
  // Where POST /allocations/{id}/metrics waits for its commit (SqliteStore's
  // group commit), off the network threads; null runs it in place.
  boost::asio::thread_pool* metric_writes = nullptr;
  // The lifecycle's own thread: handlers that use it hop there
  // (OnLifecycle); null runs it in place (component tests).
  boost::asio::thread_pool* lifecycle_thread = nullptr;
  // The bound on what waits for slow_work (sign-ins, new passwords); past it
  // the answer is 429 with Retry-After. Null: no bound (component tests).
  WorkGate* slow_work_gate = nullptr;
  // GET /trials/{id}/logs answers at most this much log text (and at least
  // one line); the answer's offset is where the next page starts.
  size_t max_log_page_bytes = 4 << 20;
  // master.yaml experiments_team_readable: other users may read (and
  // download the checkpoints and model definitions of) experiments they do
  // not own. Owners and admins always may.
  bool experiments_team_readable = true;
  // Large answers sent as streams, at most this many at once; null: no limit.
  StreamSlots* streams = nullptr;
  // Where a download's files are checked (hashed) before it starts, off the
  // network threads; null runs it in place.
  boost::asio::thread_pool* file_work = nullptr;
  // Agent enrolment, removal, slot allowances and the cluster token
  // (RegisterAgentRoutes); null answers 503.
  AgentEnrolments* enrolments = nullptr;
  // Set when master.yaml has Slurm pools: GET /agents lists their live job
  // agents too.
  RoutingRm* routing = nullptr;
  // The task proxy's links and announced services; null answers 503.
  TaskProxy* proxy = nullptr;
  // One-time tickets that open shells' terminals from browsers (POST
  // /shells/{id}/terminal/ticket); the terminal's admission redeems them.
  // Null answers 503.
  TerminalTickets* terminal_tickets = nullptr;
  // Webhooks (webhooks_api.cc): the dispatcher, reloaded when one is created
  // or deleted; the sender, whose allow list checks new URLs and which sends
  // tests; where URL checks (DNS) and tests run (in place when null). A null
  // dispatcher or sender answers 503.
  WebhookDispatcher* webhooks = nullptr;
  WebhookSender* webhook_sender = nullptr;
  boost::asio::thread_pool* webhook_work = nullptr;
  // Where GET /api/v1/agents builds its list (megabytes at 10,000 agents),
  // off the network threads; null builds it in place.
  boost::asio::thread_pool* list_work = nullptr;
};

void RegisterExperimentRoutes(Router& router, ApiContext& ctx);
// POST /experiments and /experiments/check (experiment_submit_api.cc); called
// by RegisterExperimentRoutes.
void RegisterExperimentSubmitRoutes(Router& router, ApiContext& ctx);
// Workspaces, their members and bound pools (workspaces_api.cc); projects
// and moving experiments between them (projects_api.cc). Registered before
// the experiment routes.
void RegisterWorkspaceRoutes(Router& router, ApiContext& ctx);
void RegisterProjectRoutes(Router& router, ApiContext& ctx);
// The model registry: /api/v1/models[/{name}[/versions[/{version}]]].
void RegisterModelRoutes(Router& router, ApiContext& ctx);
// Config templates: GET, PUT, DELETE /api/v1/templates[/{name}].
void RegisterTemplateRoutes(Router& router, ApiContext& ctx);
// Webhooks: POST, GET /api/v1/webhooks, DELETE /webhooks/{id}, POST
// /webhooks/{id}/test, GET /webhooks/{id}/deliveries.
void RegisterWebhookRoutes(Router& router, ApiContext& ctx);
// The experiment config of a POST /experiments body laid over its
// "template" (kInvalidArgument naming "template" for an unknown one).
Result<std::string> WithTemplate(ApiContext& ctx, const nlohmann::json& body, const std::string& config);
// Creates an experiment from `config` (YAML, a template already applied) and
// its model definition as POST /experiments does: the pool's submit rule,
// every config error at its line (422), the warnings; 201 with the id.
// `parent`: the experiment it is a fork of; `project_id`: where it goes
// (the default project when absent), the submitter a member of its
// workspace; its workspace's default pool when the config names none.
boost::asio::awaitable<ApiResponse> SubmitExperiment(ApiContext& ctx, const ApiRequest& req,
                                                     const std::string& config, const std::string& model,
                                                     bool activate, std::optional<int64_t> parent,
                                                     std::optional<int64_t> project_id = std::nullopt);
// Removes experiment `id`, which the store marked deleting, on file_work
// (in place when null): its checkpoint folders, then its rows.
void StartExperimentDeletion(ApiContext& ctx, int64_t id);
void RegisterTrialRoutes(Router& router, ApiContext& ctx);
void RegisterClusterRoutes(Router& router, ApiContext& ctx);
void RegisterAllocationRoutes(Router& router, ApiContext& ctx);
void RegisterCheckpointRoutes(Router& router, ApiContext& ctx);
void RegisterSearcherRoutes(Router& router, ApiContext& ctx);
void RegisterRendezvousRoutes(Router& router, ApiContext& ctx);
void RegisterMetricRoutes(Router& router, ApiContext& ctx);
void RegisterPoolRoutes(Router& router, ApiContext& ctx);
// Tasks that are not trials, under /api/v1/<plural> ("commands"):
// create, list, get, kill, logs (tasks_api.cc).
void RegisterTaskRoutes(Router& router, ApiContext& ctx, TaskKind kind, const std::string& plural);
// A one-time ticket that opens a shell's terminal WebSocket from a browser
// (shells_api.cc).
void RegisterShellTerminalRoutes(Router& router, ApiContext& ctx);
// Agent identity: enrolment with the cluster token, removal, slot
// allowances, rotating the cluster token.
void RegisterAgentIdentityRoutes(Router& router, ApiContext& ctx);
// The task proxy: one-time links (users) and announced services (tasks).
void RegisterProxyRoutes(Router& router, ApiContext& ctx);
// The OpenAPI document and the master's own facts (version, uptime, database).
void RegisterMetaRoutes(Router& router, ApiContext& ctx);
// The text of docs/openapi.json, compiled in.
std::string_view OpenApiDocument();
// Sign-in and users; needs ctx.accounts.
void RegisterAuthRoutes(Router& router, ApiContext& ctx);
// The trial API's routes check the caller's allocation token first (each
// Register* of trial routes calls this).
void UseAllocationTokens(Router& router, ApiContext& ctx);
// Every route above: what the master serves.
void RegisterAllRoutes(Router& router, ApiContext& ctx);

// Helpers shared by the route files.
Result<int64_t> ParseId(const std::string& text, const std::string& what);
// An optional integer query parameter within [min, max].
Result<int64_t> QueryInt(const ApiRequest& req, const std::string& name, int64_t fallback, int64_t min,
                         int64_t max);
Result<nlohmann::json> ParseJsonBody(const ApiRequest& req);
// Runs `work` on ctx.slow_work (in place when there is none) while the
// connection's strand waits without blocking: for handlers that hash
// passwords or copy the database.
boost::asio::awaitable<ApiResponse> OffNetworkThread(ApiContext& ctx, std::function<ApiResponse()> work);
// The same, for work that hashes a password: refused with 429 and a
// Retry-After when ctx.slow_work_gate's queue is full.
boost::asio::awaitable<ApiResponse> HashOffNetworkThread(ApiContext& ctx, std::function<ApiResponse()> work);
// The same on another pool (in place when null).
boost::asio::awaitable<ApiResponse> OffNetworkThread(boost::asio::thread_pool* pool,
                                                     std::function<ApiResponse()> work);
// Runs `work` on the lifecycle's thread while the connection's strand waits,
// then the scheduling pass the work made due (Lifecycle::Run).
boost::asio::awaitable<ApiResponse> OnLifecycle(ApiContext& ctx, std::function<ApiResponse(Lifecycle&)> work);
// Ok when the signed-in user owns experiment `experiment_id` or is an admin;
// else kPermissionDenied saying whose it is (kNotFound when it does not exist).
Status CheckManages(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id, const std::string& verb);
// Ok when the signed-in user may read experiment `experiment_id` and its
// trials, logs, metrics, checkpoints, model definition and model versions
// (`what`): the one rule of master/lifecycle/read_access.h (owner, admin,
// anyone when ctx.experiments_team_readable, else members of its
// workspace); else kPermissionDenied naming the rule.
Status CheckReads(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id, const std::string& what);
Status CheckReads(ApiContext& ctx, const ApiRequest& req, const ExperimentRecord& exp,
                  const std::string& what);
// The same rule for trial `trial_id`'s experiment (kNotFound without the trial).
Status CheckTrialReads(ApiContext& ctx, const ApiRequest& req, int64_t trial_id, const std::string& what);
// The same rule, for downloads (checkpoints, model definitions).
Status CheckDownloads(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id, const std::string& what);
// The reading rule's view of the signed-in user.
Reader ReaderOf(const ApiContext& ctx, const ApiRequest& req);
// A slot for one large answer, or kUnavailable naming max_streamed_answers.
Result<std::shared_ptr<void>> TakeStreamSlot(ApiContext& ctx);

}  // namespace ring
