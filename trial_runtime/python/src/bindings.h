#pragma once
// The parts of the ringtrial Python module, each binding one header of the
// trial runtime. Calls that wait (HTTP to the master, flushing, hashing
// checkpoint files) release the GIL, so other Python threads keep running.
#include <pybind11/pybind11.h>

namespace ring::trial::python {

void BindErrors(pybind11::module_& m);       // errors.h, CheckpointError
void BindSearcher(pybind11::module_& m);     // searcher.h
void BindCheckpoints(pybind11::module_& m);  // checkpoints.h
void BindPreemption(pybind11::module_& m);   // preemption.h
void BindContext(pybind11::module_& m);      // context.h; after the three above
void BindStore(pybind11::module_& m);        // kv_store.h; after BindContext
void BindDistributed(pybind11::module_& m);  // distributed.h, priority_reducer.h; after BindStore

}  // namespace ring::trial::python
