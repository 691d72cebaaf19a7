#pragma once
// master.yaml's resource_pools[].resource_manager: our agents (the
// default) or a Slurm partition, with its slurmrestd settings where the
// pool submits through slurmrestd (docs/slurm.md).
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/status.h"
#include "master/rm/slurmrm/slurm_options.h"

namespace ring {

// "path:line: what", the line being `node`'s.
Status YamlKeyError(const std::string& path, const YAML::Node& node, const std::string& what);

// `node` is the resource_manager of the pool at `at` ("resource_pools[0]")
// in the file `path`. Sets `slurm` for a slurm pool; errors name the key
// and its line.
Status ParseResourceManager(const std::string& path, const YAML::Node& node, const std::string& at,
                            std::optional<SlurmPoolOptions>& slurm);

}  // namespace ring
