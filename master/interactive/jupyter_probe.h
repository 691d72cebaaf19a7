#pragma once
// One look at a notebook's Jupyter server through its REST API: GET
// api/kernels, api/terminals and api/sessions under its base URL
// (http://<node>:<port>/proxy/<task>/), with the server's token, each
// bounded by `timeout`.
#include <chrono>
#include <string>

#include "common/status.h"
#include "master/interactive/notebook_idle.h"

namespace ring {

Result<JupyterState> ProbeJupyter(const std::string& base_url, const std::string& token,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace ring
