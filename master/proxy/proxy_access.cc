#include "master/proxy/proxy_access.h"

#include "master/store/store.h"

namespace ring {

Status CheckProxyAccess(Store& store, const std::string& username, int64_t task_id) {
  auto user = store.GetUserByName(username);
  if (!user.ok())
    return Status(ErrorCode::kPermissionDenied, "the account " + username + " no longer exists");
  if (!user->active)
    return Status(ErrorCode::kPermissionDenied, "the account " + username + " is deactivated");
  auto task = store.GetTask(task_id);
  if (!task.ok()) return NotFound("task " + std::to_string(task_id) + " does not exist");
  if (user->role != UserRole::kAdmin && task->owner != username)
    return Status(ErrorCode::kPermissionDenied, "task " + std::to_string(task_id) + " belongs to " +
                                                    task->owner +
                                                    "; only its owner or an admin may open its services");
  return Status::Ok();
}

}  // namespace ring
