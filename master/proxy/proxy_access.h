#pragma once
// Who may open a task's proxied service: its owner and admins, while their
// account is active. Read from the store on every check, so a deactivation
// or a role change applies to the very next request.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ring {

class Store;

// Ok, or kPermissionDenied naming why (a deactivated account, another
// user's task), or kNotFound for no such task or user.
Status CheckProxyAccess(Store& store, const std::string& username, int64_t task_id);

}  // namespace ring
