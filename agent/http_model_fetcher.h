#pragma once
// Downloads `GET <master><model_definition_path>` with the allocation token
// as Bearer, and unpacks the tar.gz into the work directory. Each call uses
// its own HttpClient, so calls from several worker threads are safe. An
// https master is verified with the system's CAs plus `ca_file`.
#include <chrono>

#include "agent/model_fetcher.h"
#include "common/http_client.h"

namespace ring {

class HttpModelFetcher : public ModelFetcher {
 public:
  HttpModelFetcher(Url master, std::chrono::milliseconds timeout, std::string ca_file = {})
      : master_(std::move(master)), timeout_(timeout), ca_file_(std::move(ca_file)) {}
  Status Fetch(const proto::Start& start, const std::string& dest) override;

 private:
  Url master_;
  std::chrono::milliseconds timeout_;
  std::string ca_file_;
};

}  // namespace ring
