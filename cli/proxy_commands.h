#pragma once
// `ring task proxy-link ID`: a one-time link that opens a task's service
// (a notebook, TensorBoard, the user's own server) through the master's
// task proxy, signing the browser in to that task only.
#include <cstdint>

#include "cli/cli_env.h"

namespace ring::cli {

int ProxyLink(CliEnv& env, int64_t task_id);

}  // namespace ring::cli
