// The text and JSON forms of searcher actions and exit reasons, for logs,
// scenario tests and the API.
#include <string>

#include "common/searcher/searcher.h"

namespace ring::search {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;  // C++17 spelling, for compilers without aggregate deduction

}  // namespace

std::string ToString(const Action& action) {
  return std::visit(
      Overloaded{
          [](const CreateTrial& a) {
            return "create " + std::to_string(a.request_id) + " " + a.hparams.dump() + " seed " +
                   std::to_string(a.seed);
          },
          [](const TrainTo& a) {
            return "train " + std::to_string(a.request_id) + " to " + std::to_string(a.length);
          },
          [](const CloseTrial& a) { return "close " + std::to_string(a.request_id); },
          [](const Shutdown& a) { return std::string(a.failure ? "shutdown failure" : "shutdown"); },
      },
      action);
}

nlohmann::json ToJson(const Action& action) {
  return std::visit(
      Overloaded{
          [](const CreateTrial& a) {
            return nlohmann::json{
                {"type", "create"}, {"request_id", a.request_id}, {"hparams", a.hparams}, {"seed", a.seed}};
          },
          [](const TrainTo& a) {
            return nlohmann::json{{"type", "train"}, {"request_id", a.request_id}, {"length", a.length}};
          },
          [](const CloseTrial& a) {
            return nlohmann::json{{"type", "close"}, {"request_id", a.request_id}};
          },
          [](const Shutdown& a) {
            return nlohmann::json{{"type", "shutdown"}, {"failure", a.failure}};
          },
      },
      action);
}

std::string_view ToString(ExitReason reason) {
  switch (reason) {
    case ExitReason::kErrored:
      return "errored";
    case ExitReason::kInvalidHparams:
      return "invalid_hparams";
    case ExitReason::kCanceled:
      return "canceled";
  }
  return "canceled";
}

std::optional<ExitReason> ParseExitReason(std::string_view text) {
  for (auto r : {ExitReason::kErrored, ExitReason::kInvalidHparams, ExitReason::kCanceled})
    if (ToString(r) == text) return r;
  return std::nullopt;
}

}  // namespace ring::search
