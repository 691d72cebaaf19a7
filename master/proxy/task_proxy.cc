#include "master/proxy/task_proxy.h"

namespace ring {

std::string TaskProxy::TaskUrl(int64_t task_id) const {
  return external_url_ + "/proxy/" + std::to_string(task_id) + "/";
}

std::string TaskProxy::TicketUrl(const std::string& ticket) const {
  return external_url_ + "/proxy-ticket/" + ticket;
}

}  // namespace ring
