#include "ring/trial/preemption.h"

#include "bindings.h"

namespace ring::trial::python {

namespace py = pybind11;

void BindPreemption(py::module_& m) {
  py::class_<Preemption>(m, "Preemption",
                         "Whether the platform asks this trial to stop (pause, preemption, SIGTERM): "
                         "checkpoint, acknowledge() and exit 0. Reach it as Context.preempt.")
      .def("should_preempt", &Preemption::should_preempt,
           "Non-blocking. The first call starts watching (the master's long poll on the chief, "
           "and SIGTERM on every rank). Raises AllocationEndedError once the master ended the allocation.")
      .def("acknowledge", &Preemption::acknowledge, py::call_guard<py::gil_scoped_release>(),
           "Tells the master the trial stops because it was asked to (so exit 0 pauses it); "
           "nothing in local mode or on other ranks than the chief.");
}

}  // namespace ring::trial::python
