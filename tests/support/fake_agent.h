#pragma once
// A raw agent for attack tests: a WebSocket client of /api/v1/agents/ws
// on 127.0.0.1 that presents whatever headers a test gives it, says any
// hello and sends any message, as a machine holding a stolen cluster token
// (or credential) would. Each call waits at most a few seconds.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/agent_protocol.h"

namespace ring::testing {

struct EnrolAnswer {
  int status = 0;  // 0 when the master could not be reached
  nlohmann::json body;
};
// POST /api/v1/agents/enrol with "Authorization: Bearer <token>" (none when
// empty) and `body`.
EnrolAnswer EnrolAgent(int port, const std::string& token, const nlohmann::json& body);

class FakeAgent {
 public:
  // Connects to 127.0.0.1:port and asks to upgrade with `headers` (e.g.
  // X-Ring-Agent-Id, Authorization). upgraded() tells whether it was let in;
  // otherwise status() and body() are the master's answer.
  FakeAgent(int port, const std::map<std::string, std::string>& headers);
  // For one enrolled id: its id header and its credential as Bearer.
  static std::map<std::string, std::string> Credentials(const std::string& agent_id,
                                                        const std::string& credential);
  ~FakeAgent();
  FakeAgent(const FakeAgent&) = delete;
  FakeAgent& operator=(const FakeAgent&) = delete;

  bool upgraded() const { return status_ == 101; }
  int status() const { return status_; }
  const std::string& body() const { return body_; }

  // Sends hello and waits for the welcome; false when the master closes the
  // connection instead (or says nothing within 5 s).
  bool Hello(const proto::Hello& hello);
  bool Send(const proto::Message& message);
  // The next frame the master sends; nullopt when the connection closed or
  // `timeout` passed, which ends the connection (a WebSocket read cannot be
  // abandoned halfway).
  std::optional<proto::Message> ReadOne(std::chrono::milliseconds timeout);
  // Whether the master closed the connection (seen by a read).
  bool closed() const { return closed_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int status_ = 0;
  std::string body_;
  bool closed_ = false;
};

}  // namespace ring::testing
