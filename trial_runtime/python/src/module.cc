// `import ringtrial`: the trial runtime for Python training scripts.
#include "bindings.h"

PYBIND11_MODULE(ringtrial, m) {
  m.doc() =
      "The Ringmaster trial runtime: hyperparameters, metrics, checkpoints, searcher operations and "
      "preemption of the trial this process belongs to. Start with Context.from_environment().";
  namespace rp = ring::trial::python;
  rp::BindErrors(m);
  rp::BindSearcher(m);
  rp::BindCheckpoints(m);
  rp::BindPreemption(m);
  rp::BindContext(m);
  rp::BindStore(m);
  rp::BindDistributed(m);
}
