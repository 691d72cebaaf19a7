// Searcher operations as a Python iterator:
//
//   for op in ctx.searcher.operations():
//       train_until(op.length)
//       op.report_completed(validate())
//
// Asking for the next operation may wait on the master (a long poll while
// the chief completes the last one), so it runs without the GIL.
#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "ring/trial/searcher.h"

#include "bindings.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

// What operations() returns; each step asks Searcher::next_operation().
class OperationIterator {
 public:
  explicit OperationIterator(Searcher& searcher) : searcher_(&searcher) {}

  SearcherOperation Next() {
    std::optional<SearcherOperation> op;
    {
      py::gil_scoped_release release;
      op = searcher_->next_operation();
    }
    if (!op) throw py::stop_iteration();
    return *op;
  }

 private:
  Searcher* searcher_;  // kept alive by keep_alive on operations()
};

std::optional<SearcherOperation> NextOperation(Searcher& searcher) {
  py::gil_scoped_release release;
  return searcher.next_operation();
}

}  // namespace

void BindSearcher(py::module_& m) {
  py::class_<SearcherOperation>(m, "SearcherOperation",
                                "Train until the trial's total batches reach `length`, validate, "
                                "then call report_completed() with the searcher metric.")
      .def_property_readonly("length", &SearcherOperation::length)
      .def("report_completed", &SearcherOperation::report_completed, py::arg("metric"),
           py::call_guard<py::gil_scoped_release>(),
           "Completes the operation with the searcher metric at `length` (also reported as a "
           "validation metric there unless the last validation report included it). The chief "
           "waits until the master acknowledged every metric report so far.")
      .def("__repr__", [](const SearcherOperation& op) {
        return "<ringtrial.SearcherOperation length=" + std::to_string(op.length()) + ">";
      });

  py::class_<OperationIterator>(m, "SearcherOperations")
      .def("__iter__", [](OperationIterator& it) -> OperationIterator& { return it; })
      .def("__next__", &OperationIterator::Next, py::keep_alive<0, 1>());

  py::class_<Searcher>(m, "Searcher",
                       "The experiment's searcher, as seen by this trial. Reach it as Context.searcher.")
      .def(
          "operations", [](Searcher& s) { return OperationIterator(s); }, py::keep_alive<0, 1>(),
          "An iterator over the searcher's operations; complete each one inside the loop body.")
      .def("next_operation", &NextOperation, py::keep_alive<0, 1>(),
           "Waits until the master has the next operation; None when it has none now (checkpoint "
           "and exit 0). Raises TrialError when the previous operation was not completed.")
      .def("report_invalid_hparams", &Searcher::report_invalid_hparams, py::arg("message"),
           py::call_guard<py::gil_scoped_release>(),
           "Tells the master these hyperparameters cannot be trained; exit afterwards.")
      .def_property_readonly("metric_name", &Searcher::metric_name,
                             "The searcher metric (searcher.metric), 'validation_loss' when unset.");
}

}  // namespace ring::trial::python
