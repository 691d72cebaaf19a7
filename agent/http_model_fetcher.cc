#include "agent/http_model_fetcher.h"

#include "common/archive.h"

namespace ring {

Status HttpModelFetcher::Fetch(const proto::Start& start, const std::string& dest) {
  if (start.model_definition_path.empty()) return Status::Ok();  // nothing to unpack
  HttpClient client(master_, timeout_);
  client.SetCaFile(ca_file_);
  client.SetBearerToken(start.allocation_token);
  auto response = client.Get(start.model_definition_path);
  if (!response.ok())
    return Status(response.status().code(), "model download failed: " + response.status().message());
  if (response->status != 200) {
    return Status(ErrorCode::kUnavailable, "model download failed: GET " + start.model_definition_path +
                                               ": " + ErrorMessageFromBody(*response));
  }
  Status unpacked = UnpackArchive(response->body, dest);
  if (!unpacked.ok())
    return Status(unpacked.code(), "model definition cannot be unpacked: " + unpacked.message());
  return Status::Ok();
}

}  // namespace ring
