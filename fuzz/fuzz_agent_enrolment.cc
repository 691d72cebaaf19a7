// Fuzzes how the master lets agents in (master/rm/agentrm/agent_admission.h,
// agent_enrolments.h): enrolment requests with the cluster token, the
// headers of the agent channel's upgrade, removals, and hellos judged
// against an agent's enrolment and the ranks placed on it.
//
// The input is a script of records, one per line; a record's first byte
// picks the step (modulo 5) and the rest is split at 0x1f into its fields:
//   0 enrol      authorization, body          POST /api/v1/agents/enrol
//   1 upgrade    authorization, agent id      the WebSocket upgrade's headers
//   2 upgrade    agent id, with the credential of the first agent, "real"
//   3 remove     agent id                     `ring agent remove`
//   4 hello      a hello frame (JSON)         JudgeHello for "real"
// Beyond "no crash": a refusal is a 4xx code; an upgrade is let in only for
// an enrolled, not removed id presenting the credential issued to it last;
// an enrolment needs the cluster token and never takes an id that holds a
// valid credential; a removed id's credential never works again; an
// admitted hello keeps the id and pool of the enrolment, no more slots than
// enrolled, and no running rank of a placed allocation that is not its own.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/agent_protocol.h"
#include "fuzz/fuzz_check.h"
#include "master/rm/agentrm/agent_admission.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/store/memory_store.h"

namespace {

const std::string kClusterToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

bool Is4xx(ring::ErrorCode code) {
  return code == ring::ErrorCode::kUnauthenticated || code == ring::ErrorCode::kInvalidArgument ||
         code == ring::ErrorCode::kConflict || code == ring::ErrorCode::kNotFound;
}

struct Model {
  std::map<std::string, std::string> credential;  // id -> the credential issued last
  std::set<std::string> removed;
  bool Valid(const std::string& id) const { return credential.count(id) && !removed.count(id); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  ring::MemoryStore store;
  ring::AgentEnrolments enrolments(store, "/nonexistent/cluster-token", kClusterToken);
  Model model;
  auto real = enrolments.Enrol("Bearer " + kClusterToken, R"({"agent_id":"real","pool":"default","slots":2})",
                               "fuzz");
  FUZZ_CHECK(real.ok(), real.status().ToString());
  model.credential["real"] = real->credential;

  const std::string script(reinterpret_cast<const char*>(data), size);
  int steps = 0;
  for (const std::string& record : Split(script, '\n')) {
    if (record.empty() || ++steps > 64) continue;
    const int op = static_cast<unsigned char>(record[0]) % 5;
    const std::vector<std::string> f = Split(record.substr(1), '\x1f');
    const std::string a = f[0];
    const std::string b = f.size() > 1 ? f[1] : "";
    switch (op) {
      case 0: {  // enrol
        auto request = ring::ParseEnrolRequest(b);
        const bool had_valid = request.ok() && model.Valid(request->agent_id);
        auto issued = enrolments.Enrol(a, b, "fuzz");
        if (!issued.ok()) {
          FUZZ_CHECK(Is4xx(issued.status().code()), issued.status().ToString());
          break;
        }
        FUZZ_CHECK(a == "Bearer " + kClusterToken, "enrolled without the cluster token: " + a);
        FUZZ_CHECK(request.ok(), "enrolled with a body the parser refuses: " + b);
        FUZZ_CHECK(!had_valid, "enrolled " + issued->agent_id + " again while it held a valid credential");
        FUZZ_CHECK(issued->agent_id == request->agent_id && issued->slots == request->slots &&
                       issued->pool == request->pool,
                   b);
        FUZZ_CHECK(issued->credential.size() == 64 && issued->credential != kClusterToken,
                   issued->credential);
        model.credential[issued->agent_id] = issued->credential;
        model.removed.erase(issued->agent_id);
        break;
      }
      case 1:    // upgrade with any headers
      case 2: {  // upgrade with the first agent's credential for any id
        const std::string authorization = op == 2 ? "Bearer " + model.credential["real"] : a;
        const std::string id = op == 2 ? a : b;
        auto let_in = enrolments.Authenticate(authorization, id, "fuzz");
        if (!let_in.ok()) {
          FUZZ_CHECK(let_in.status().code() == ring::ErrorCode::kUnauthenticated, let_in.status().ToString());
          break;
        }
        FUZZ_CHECK(*let_in == id, "let in as " + *let_in + " for the header " + id);
        FUZZ_CHECK(model.Valid(id), "let in " + id + ", which is not enrolled or was removed");
        FUZZ_CHECK(authorization == "Bearer " + model.credential[id],
                   "let in " + id + " with a credential not issued to it");
        break;
      }
      case 3: {  // remove
        const ring::Status s = enrolments.Revoke(a);
        if (!s.ok()) {
          FUZZ_CHECK(s.code() == ring::ErrorCode::kNotFound, s.ToString());
          FUZZ_CHECK(!model.credential.count(a), "could not remove enrolled " + a);
          break;
        }
        model.removed.insert(a);
        auto after = enrolments.Authenticate("Bearer " + model.credential[a], a, "fuzz");
        FUZZ_CHECK(!after.ok(), "a removed agent's credential still connects: " + a);
        break;
      }
      case 4: {  // hello from "real"
        auto message = ring::proto::Decode(a);
        if (!message.ok() || !std::holds_alternative<ring::proto::Hello>(*message)) break;
        const auto& hello = std::get<ring::proto::Hello>(*message);
        auto enrolment = enrolments.Find("real");
        FUZZ_CHECK(enrolment.has_value(), "real vanished");
        const ring::PlacedRanks placed = {{"a-real", {0, 1}}};
        auto verdict = ring::JudgeHello(hello, "real", *enrolment, placed, [](const std::string& id) {
          return id == "a-real" || id == "a-other";
        });
        const bool wrong_id = hello.agent_id != "real";
        const bool wrong_pool = (hello.pool.empty() ? "default" : hello.pool) != enrolment->pool;
        FUZZ_CHECK(verdict.refused.has_value() == (wrong_id || wrong_pool), a);
        if (verdict.refused) break;
        FUZZ_CHECK(verdict.admitted.agent_id == "real" && verdict.admitted.pool == enrolment->pool, a);
        FUZZ_CHECK(static_cast<int64_t>(verdict.admitted.slots.size()) <= enrolment->slots,
                   "admitted " + std::to_string(verdict.admitted.slots.size()) + " slots");
        for (const auto& r : verdict.admitted.running)
          FUZZ_CHECK(r.allocation_id != "a-real" || r.rank == 0 || r.rank == 1,
                     "admitted rank " + std::to_string(r.rank) + " of a-real");
        break;
      }
    }
  }
  // Whatever happened, the first agent still gets in with its credential
  // unless it was removed, and never with the cluster token.
  auto first = enrolments.Authenticate("Bearer " + model.credential["real"], "real", "fuzz");
  FUZZ_CHECK(first.ok() == model.Valid("real"), first.ok() ? "let in" : first.status().ToString());
  FUZZ_CHECK(!enrolments.Authenticate("Bearer " + kClusterToken, "real", "fuzz").ok(),
             "the cluster token opened an agent's channel");
  return 0;
}
