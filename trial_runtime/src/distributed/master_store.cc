// MasterStore: PUT/GET /api/v1/allocations/{id}/rendezvous. A get() longer
// than one request may wait is a series of waiting reads of at most 30 s
// each, until its own deadline; the master answers each as soon as the key
// is set.
#include "distributed/master_store.h"

#include <algorithm>
#include <string>

#include "common/http_client.h"
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"
#include "trial_api.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kLongestWait = 30s;     // per waiting read
constexpr std::chrono::milliseconds kHttpSlack = 15s;       // beyond the wait, for the answer itself
constexpr std::chrono::milliseconds kRequestTimeout = 30s;  // set and check
constexpr size_t kCheckQueryBytes = 4000;                   // keys per check request, at most

[[noreturn]] void Fail(const detail::ApiReply& reply, const std::string& what) {
  if (reply.status == 401 || reply.status == 409)
    throw AllocationEndedError("the master ended this allocation (" + detail::Describe(reply) + ") while " +
                               what + "; this process must stop");
  if (reply.status == 0 || reply.status >= 500)
    throw RendezvousError("the master did not answer while " + what + " (" + detail::Describe(reply) +
                          "); gave up after the retry budget (RING_API_RETRY_SECONDS)");
  throw RendezvousError("the master refused " + what + ": " + detail::Describe(reply));
}

class MasterKeyValueStore final : public KeyValueStore {
 public:
  explicit MasterKeyValueStore(std::shared_ptr<detail::TrialApi> api) : api_(std::move(api)) {}

  void set(const std::string& key, const Bytes& value) override {
    detail::CheckKey(key);
    detail::CheckValue(key, value);
    const auto reply = api_->CallBytes("PUT", "/rendezvous?key=" + ring::PercentEncode(key),
                                       std::string(value.begin(), value.end()), kRequestTimeout);
    if (!reply.ok()) Fail(reply, "setting rendezvous key " + key);
  }

  Bytes get(const std::string& key, std::chrono::milliseconds timeout) override {
    detail::CheckKey(key);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto wait = std::min(detail::TimeLeft(deadline), kLongestWait);
      const auto reply = api_->CallBytes(
          "GET",
          "/rendezvous?key=" + ring::PercentEncode(key) + "&timeout_ms=" + std::to_string(wait.count()), {},
          wait + kHttpSlack);
      if (reply.ok()) return Bytes(reply.raw.begin(), reply.raw.end());
      const bool not_set = reply.status == 404 && reply.error.find("is not set") != std::string::npos;
      if (!not_set) Fail(reply, "reading rendezvous key " + key);
      if (std::chrono::steady_clock::now() >= deadline)
        throw RendezvousError("rendezvous key " + key + " was not set within " +
                              detail::DescribeTimeout(timeout));
    }
  }

  bool check(const std::vector<std::string>& keys) override {
    for (const auto& key : keys) detail::CheckKey(key);
    size_t next = 0;
    while (next < keys.size()) {
      std::string list;
      while (next < keys.size() && (list.empty() || list.size() + keys[next].size() < kCheckQueryBytes))
        list += (list.empty() ? "" : ",") + keys[next++];
      const auto reply =
          api_->Call("GET", "/rendezvous?keys=" + ring::PercentEncode(list), {}, kRequestTimeout);
      if (!reply.ok()) Fail(reply, "checking rendezvous keys");
      const auto missing = reply.body.is_object() ? reply.body.find("missing") : reply.body.end();
      if (missing == reply.body.end() || !missing->is_array())
        throw RendezvousError("the master's answer to a rendezvous check has no \"missing\" list");
      if (!missing->empty()) return false;
    }
    return true;
  }

 private:
  std::shared_ptr<detail::TrialApi> api_;
};

}  // namespace

namespace detail {
std::shared_ptr<KeyValueStore> MasterStoreOver(std::shared_ptr<TrialApi> api) {
  return std::make_shared<MasterKeyValueStore>(std::move(api));
}
}  // namespace detail

std::shared_ptr<KeyValueStore> MasterStore(const std::string& master_url, const std::string& allocation_id,
                                           const std::string& token) {
  if (master_url.empty() || allocation_id.empty() || token.empty())
    throw ConfigError("MasterStore needs the master's URL, an allocation id and its token");
  if (!ring::Url::Parse(master_url).ok())
    throw ConfigError("MasterStore: \"" + master_url + "\" is not a master URL (http://host:port)");
  return detail::MasterStoreOver(
      std::make_shared<detail::TrialApi>(master_url, allocation_id, token, std::chrono::seconds(120)));
}

}  // namespace ring::trial
