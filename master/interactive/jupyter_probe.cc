#include "master/interactive/jupyter_probe.h"

#include "common/http_client.h"

namespace ring {

Result<JupyterState> ProbeJupyter(const std::string& base_url, const std::string& token,
                                  std::chrono::milliseconds timeout) {
  auto url = Url::Parse(base_url);
  if (!url.ok()) return url.status();
  HttpClient http(*url, timeout);
  http.SetHeader("Authorization", "token " + token);
  std::string bodies[3];
  const char* paths[3] = {"/api/kernels", "/api/terminals", "/api/sessions"};
  for (int i = 0; i < 3; ++i) {
    auto res = http.Get(paths[i]);
    if (!res.ok()) return res.status();
    if (res->status != 200)
      return Unavailable(std::string("Jupyter answered HTTP ") + std::to_string(res->status) + " to " +
                         paths[i]);
    bodies[i] = std::move(res->body);
  }
  return ParseJupyterState(bodies[0], bodies[1], bodies[2]);
}

}  // namespace ring
