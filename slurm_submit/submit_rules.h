#pragma once
// What the submit helper accepts from its caller, as pure checks (the
// attack tests drive them directly): an allocation id that names one folder,
// sbatch options that cannot change what runs or as whom, an account that
// is not a system one, and the master's grant matching the request.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring::submit {

// 1-64 letters, digits, '.', '_' or '-', not starting with '.'.
Status CheckAllocationId(const std::string& id);

// Each option a long one (--name or --name=value) that does not choose the
// script, its folder, its input or output, its environment, its name or
// its account: those are the helper's.
Status CheckSbatchOptions(const std::vector<std::string>& options);

// The value of --nodelist= among `options`; empty when absent.
std::string NodelistOf(const std::vector<std::string>& options);

// A job runs only as an account at or above min_uid (never root).
Status CheckAccount(int64_t uid, int64_t min_uid);

// What the master answered about the allocation (GET
// /api/v1/slurm/grants/{id}), and whether it matches the request.
struct Grant {
  int64_t uid = -1;
  int64_t gid = -1;
  std::vector<std::string> nodes;
};
Result<Grant> ParseGrant(const std::string& json);
Status CheckGrant(const Grant& grant, int64_t uid, int64_t gid, const std::string& nodelist);

// The container runtime the job's agents use: empty (none), podman, docker,
// apptainer or singularity.
Status CheckContainerRuntime(const std::string& runtime);

// `--signal=` values scancel may get: a signal name or number.
Status CheckSignal(const std::string& signal);

}  // namespace ring::submit
