#pragma once
// The agent's WebSocket connection to the master (/api/v1/agents/ws).
// Connects; without a credential yet, enrols first on the same connection
// (POST /api/v1/agents/enrol with the cluster token, answered with the
// credential of its id, which `on_enrolled` keeps); upgrades presenting its
// id (X-Ring-Agent-Id) and credential (Authorization: Bearer); sends hello,
// waits for welcome, then sends heartbeats at the
// interval the master asked for and dispatches start/kill to the callbacks.
// Reconnects forever with exponential backoff and jitter (100 ms doubling to
// 5 s) until Stop. State and log messages sent while disconnected wait in a
// bounded OutboundQueue. All socket work runs on one strand of the given
// io_context; Send may be called from any thread. Beast stays in the .cc.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "agent/message_sink.h"

namespace boost::asio {
class io_context;
}

namespace ring {

class MasterLink : public MessageSink {
 public:
  struct Options {
    std::string master_url;       // "http[s]://host:port[/prefix]"; https connects with wss
    std::string agent_id;         // sent as X-Ring-Agent-Id at the upgrade, and in log lines
    std::string credential;       // this id's credential from enrolment; empty: enrol first
    std::string cluster_token;    // enrols this agent when it has no credential yet
    std::string credential_file;  // where the credential is kept, for messages
    std::string ca_file;          // https: CA (PEM) trusted besides the system's; "" = the system's only
    std::chrono::milliseconds backoff_initial{100};
    std::chrono::milliseconds backoff_max{5000};
    std::chrono::milliseconds connect_timeout{10000};  // connect + upgrade + hello/welcome
    std::chrono::milliseconds flush_timeout{2000};     // Stop waits this long for queued messages
    size_t max_queued_log_bytes = 32u << 20;
    size_t max_queued_log_batches = 10000;
  };
  struct Callbacks {
    // Builds hello for each connection; `local_address` is this end's IP as the master sees it.
    std::function<proto::Hello(const std::string& local_address)> make_hello;
    std::function<void(proto::Start)> on_start;  // called on the link's strand
    std::function<void(proto::Kill)> on_kill;    // called on the link's strand
    // TerminalOpen, TerminalInput, TerminalResize or TerminalClose, on the link's strand.
    std::function<void(proto::Message)> on_terminal;
    // Keeps the credential the master issued at enrolment before it is used
    // (called on the link's strand); an error stops this attempt.
    std::function<Status(const std::string& credential)> on_enrolled;
  };

  MasterLink(boost::asio::io_context& io, Options options, Callbacks callbacks);
  // Call Stop (and let it finish) first, or destroy after the io_context stopped.
  ~MasterLink() override;
  MasterLink(const MasterLink&) = delete;
  MasterLink& operator=(const MasterLink&) = delete;

  void Start();
  void Send(proto::Message message) override;
  // Sends what is queued (up to flush_timeout), closes the connection, stops
  // reconnecting, then runs `done` on the link's strand.
  void Stop(std::function<void()> done);

  bool connected() const;    // welcomed and not yet dropped
  int64_t sessions() const;  // welcomes received so far
  size_t queued() const;     // messages waiting (approximate, any thread)

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace ring
