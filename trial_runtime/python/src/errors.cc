// The runtime's typed exceptions as Python exceptions of the same names and
// hierarchy, TrialError deriving from RuntimeError. pybind11 tries the most
// recently registered translator first, so the base class goes first.
#include "ring/trial/errors.h"
#include "ring/trial/checkpoints.h"

#include "bindings.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

template <typename Error>
void Register(py::module_& m, const char* name, py::handle base, const char* doc) {
  auto& type = py::register_exception<Error>(m, name, base);
  type.attr("__doc__") = doc;
}

}  // namespace

void BindErrors(py::module_& m) {
  Register<TrialError>(m, "TrialError", PyExc_RuntimeError, "Base of every error the trial runtime raises.");
  const py::handle base = m.attr("TrialError");
  Register<HparamError>(m, "HparamError", base, "A hyperparameter is missing or has the wrong type.");
  Register<ConfigError>(m, "ConfigError", base, "The environment or the local-mode flags are malformed.");
  Register<MetricsError>(m, "MetricsError", base, "A metric report is invalid or could not be queued.");
  Register<AllocationEndedError>(m, "AllocationEndedError", base,
                                 "The master ended this allocation: stop and exit non-zero.");
  Register<MasterUnreachableError>(m, "MasterUnreachableError", base,
                                   "The master did not answer within RING_API_RETRY_SECONDS.");
  Register<RendezvousError>(m, "RendezvousError", base, "Not every rank arrived at the rendezvous.");
  Register<CollectiveError>(m, "CollectiveError", base, "A collective failed or timed out.");
  Register<CheckpointError>(m, "CheckpointError", base,
                            "A checkpoint is incomplete or corrupted, or cannot be stored or registered.");
}

}  // namespace ring::trial::python
