#pragma once
// Store records as the REST API's JSON shapes (DESIGN.md, "The contract").
#include <nlohmann/json.hpp>

#include "master/lifecycle/scheduling_driver.h"
#include "master/store/store.h"

namespace ring {

nlohmann::json ExperimentJson(const ExperimentRecord& e, int64_t num_trials);
nlohmann::json TrialJson(const TrialRecord& t);
nlohmann::json LogPolicyMatchJson(const LogPolicyMatch& m);
nlohmann::json AllocationJson(const AllocationRecord& a);
nlohmann::json MetricJson(const MetricReport& m);
nlohmann::json LogJson(const LogRecord& l);
nlohmann::json CheckpointJson(const CheckpointRecord& c);
// A user for the API (never the password hash).
nlohmann::json UserJson(const UserRecord& u);
// GET /api/v1/jobs: the scheduling driver's rows.
nlohmann::json JobsJson(const std::vector<JobRow>& rows);

}  // namespace ring
