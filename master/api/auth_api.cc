// Sign-in and users: POST /api/v1/auth/login|logout, /api/v1/users...
// Hashing a password takes about 0.1 s, so the handlers that hash run on
// ctx.slow_work and the connection's strand waits without blocking; that
// queue is bounded (ctx.slow_work_gate), past it the answer is 429.
#include <cctype>
#include <optional>

#include "common/json_fields.h"
#include "master/api/commands.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/auth/accounts.h"

namespace ring {
namespace {

Result<std::string> StringField(const nlohmann::json& body, const char* name, bool required) {
  if (!body.contains(name)) {
    if (required) return InvalidArgument(std::string(name) + " is required");
    return std::string();
  }
  if (!body[name].is_string()) return InvalidArgument(std::string(name) + " must be a string");
  return body[name].get<std::string>();
}

// Sign-in takes JSON only: a form post from another site (which a browser
// sends without asking, as text/plain or x-www-form-urlencoded) is refused
// before any password is hashed.
std::optional<ApiResponse> RefuseNonJson(const ApiRequest& req) {
  std::string type = req.Header("content-type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (type == "application/json") return std::nullopt;
  auto refused = ApiResponse::Error(InvalidArgument("sign-in takes Content-Type: application/json, got \"" +
                                                    req.Header("content-type").substr(0, 64) + "\""));
  refused.status = 415;
  return refused;
}

ApiResponse Login(ApiContext& ctx, const ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"username", "password"}, "the request body"); !s.ok())
    return ApiResponse::Error(s);
  auto username = StringField(*body, "username", true);
  if (!username.ok()) return ApiResponse::Error(username.status());
  auto password = StringField(*body, "password", true);
  if (!password.ok()) return ApiResponse::Error(password.status());
  int64_t retry_after = 0;
  auto login = ctx.accounts->Login(*username, *password, req.peer, &retry_after);
  if (!login.ok()) {
    auto refused = ApiResponse::Error(login.status());
    if (retry_after > 0) refused.headers.emplace_back("Retry-After", std::to_string(retry_after));
    return refused;
  }
  return ApiResponse::Json(
      {{"token", login->token}, {"expires_at", login->expires_at}, {"user", UserJson(login->user)}});
}

ApiResponse CreateUser(ApiContext& ctx, const ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"username", "password", "role"}, "the request body"); !s.ok())
    return ApiResponse::Error(s);
  auto username = StringField(*body, "username", true);
  if (!username.ok()) return ApiResponse::Error(username.status());
  auto password = StringField(*body, "password", true);
  if (!password.ok()) return ApiResponse::Error(password.status());
  auto role = DecodeRole(*body);
  if (!role.ok()) return ApiResponse::Error(role.status());
  auto user = ctx.accounts->CreateUser(*req.principal, *username, *password, *role);
  if (!user.ok()) return ApiResponse::Error(user.status());
  return ApiResponse::Json(UserJson(*user), 201);
}

ApiResponse ChangeUser(ApiContext& ctx, const ApiRequest& req) {
  auto id = ParseId(req.params[0], "user id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  if (!req.principal->admin() && req.principal->user_id != *id)
    return ApiResponse::Error({ErrorCode::kPermissionDenied, "only an admin may change another user"});
  // Refused before the value is read: no Unix account is anyone's to pick
  // but an admin's, whatever the value.
  if (!req.principal->admin() && body->is_object() && body->contains("unix"))
    return ApiResponse::Error(
        {ErrorCode::kPermissionDenied, "unix: only an admin may link a user to a Unix account"});
  auto patch = DecodeUserPatch(*body);
  if (!patch.ok()) return ApiResponse::Error(patch.status());
  auto user = ctx.accounts->ChangeUser(*req.principal, *id, *patch, req.peer);
  if (!user.ok()) return ApiResponse::Error(user.status());
  return ApiResponse::Json(UserJson(*user));
}

ApiResponse GetUser(ApiContext& ctx, const ApiRequest& req) {
  auto id = ParseId(req.params[0], "user id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (!req.principal->admin() && req.principal->user_id != *id)
    return ApiResponse::Error({ErrorCode::kPermissionDenied, "only an admin may look at another user"});
  auto user = ctx.accounts->GetUser(*id);
  if (!user.ok()) return ApiResponse::Error(user.status());
  return ApiResponse::Json(UserJson(*user));
}

}  // namespace

void RegisterAuthRoutes(Router& router, ApiContext& ctx) {
  router.SetAuthenticator([&ctx](const std::string& token) { return ctx.accounts->Authenticate(token); });
  router.Add("POST", "/api/v1/auth/login", Access::kPublic,
             [&ctx](ApiRequest& req) -> boost::asio::awaitable<ApiResponse> {
               if (auto refused = RefuseNonJson(req)) co_return *refused;
               co_return co_await HashOffNetworkThread(ctx, [&ctx, &req] { return Login(ctx, req); });
             });
  router.Add("POST", "/api/v1/auth/logout", Access::kUser, [&ctx](ApiRequest& req) {
    return OffNetworkThread(ctx, [&ctx, &req] {
      if (Status s = ctx.accounts->Logout(req.BearerToken()); !s.ok()) return ApiResponse::Error(s);
      return ApiResponse::Json({{"signed_out", req.principal->username}});
    });
  });
  router.AddSync("GET", "/api/v1/users/me", Access::kUser, [&ctx](ApiRequest& req) {
    auto user = ctx.accounts->GetUser(req.principal->user_id);
    if (!user.ok()) return ApiResponse::Error(user.status());
    return ApiResponse::Json(UserJson(*user));
  });
  router.AddSync("GET", "/api/v1/users", Access::kAdmin, [&ctx](ApiRequest&) {
    auto users = ctx.accounts->ListUsers();
    if (!users.ok()) return ApiResponse::Error(users.status());
    nlohmann::json list = nlohmann::json::array();
    for (const auto& u : *users) list.push_back(UserJson(u));
    return ApiResponse::Json({{"users", list}, {"total", list.size()}});
  });
  router.Add("POST", "/api/v1/users", Access::kAdmin, [&ctx](ApiRequest& req) {
    return HashOffNetworkThread(ctx, [&ctx, &req] { return CreateUser(ctx, req); });
  });
  router.AddSync("GET", "/api/v1/users/{id}", Access::kUser,
                 [&ctx](ApiRequest& req) { return GetUser(ctx, req); });
  router.Add("PATCH", "/api/v1/users/{id}", Access::kUser, [&ctx](ApiRequest& req) {
    return HashOffNetworkThread(ctx, [&ctx, &req] { return ChangeUser(ctx, req); });
  });
}

}  // namespace ring
