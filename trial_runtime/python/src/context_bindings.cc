// ringtrial.Context: ring::trial::Context for Python training scripts.
//
//   ctx = ringtrial.Context.from_environment()     # argv defaults to sys.argv
//   lr = ctx.hparam("learning_rate")
//   for op in ctx.searcher.operations(): ...
//
// Searcher, checkpoints and preemption are views into the Context (each
// keeps it alive). Use a Context from one thread, as in C++.
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ring/trial/context.h"

#include "bindings.h"
#include "json_convert.h"

namespace ring::trial::python {

namespace py = pybind11;

namespace {

// The destructor waits (up to a minute) until the master acknowledged the
// last reports: without the GIL, so that other Python threads keep running.
// While the interpreter shuts down there is no thread state to release.
struct ContextDeleter {
  void operator()(Context* ctx) const {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release release;
      delete ctx;
    } else {
      delete ctx;
    }
  }
};

Context FromEnvironment(const py::object& argv, const py::object& env) {
  std::vector<std::string> args;
  for (const auto& arg : argv.is_none() ? py::module_::import("sys").attr("argv") : argv)
    args.push_back(py::str(arg));
  std::vector<const char*> pointers;
  for (const auto& arg : args) pointers.push_back(arg.c_str());
  pointers.push_back(nullptr);
  const int argc = static_cast<int>(args.size());
  if (env.is_none()) return Context::from_environment(argc, pointers.data());
  return Context::from_environment(argc, pointers.data(), env.cast<Environment>());
}

// The type of `fallback` says what the value must be, as hparam<T>() in C++:
// bool, int (an integral float is accepted), float (an int is accepted), str.
py::object Hparam(const Context& ctx, const std::string& name, const py::object& fallback) {
  if (!ctx.has_hparam(name)) return fallback;
  if (py::isinstance<py::bool_>(fallback)) return py::bool_(ctx.hparam<bool>(name));
  if (py::isinstance<py::int_>(fallback)) return py::int_(ctx.hparam<int64_t>(name));
  if (py::isinstance<py::float_>(fallback)) return py::float_(ctx.hparam<double>(name));
  if (py::isinstance<py::str>(fallback)) return py::str(ctx.hparam<std::string>(name));
  return ToPython(ctx.hparam<nlohmann::json>(name));
}

bool Flush(Context& ctx, double timeout_s) {
  if (!(timeout_s >= 0)) throw py::value_error("flush: timeout_s must be a non-negative number of seconds");
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(timeout_s));
  py::gil_scoped_release release;
  return ctx.flush(timeout);
}

std::string Describe(const Context& ctx) {
  std::string text = "<ringtrial.Context ";
  text += ctx.is_local() ? "local" : "trial " + std::to_string(ctx.trial_id());
  return text + " rank " + std::to_string(ctx.rank()) + "/" + std::to_string(ctx.world_size()) + ">";
}

}  // namespace

void BindContext(py::module_& m) {
  const auto release = py::call_guard<py::gil_scoped_release>();
  py::class_<Context, std::unique_ptr<Context, ContextDeleter>>(
      m, "Context",
      "What this trial process knows about itself and how it reports (see trial_runtime/README.md).")
      .def_static("from_environment", &FromEnvironment, py::arg("argv") = py::none(),
                  py::arg("env") = py::none(),
                  "Builds the Context from the environment the agent set (os.environ unless `env`, a dict of "
                  "str, is given) and argv (sys.argv by default; local mode reads --hparam, --batches, ...).")
      .def_property_readonly("is_local", &Context::is_local, "True without RING_MASTER_URL (local mode).")
      .def_property_readonly(
          "hparams", [](const Context& ctx) { return ToPython(ctx.hparams()); },
          "The hyperparameters as a new dict (nested ones stay nested).")
      .def("has_hparam", &Context::has_hparam, py::arg("name"))
      .def(
          "hparam",
          [](const Context& ctx, const std::string& name) {
            return ToPython(ctx.hparam<nlohmann::json>(name));
          },
          py::arg("name"), "The hyperparameter `name`; raises HparamError when it is missing.")
      .def("hparam", &Hparam, py::arg("name"), py::arg("default"),
           "The hyperparameter `name`, or `default` when missing. When `default` is a bool, int, float or "
           "str, the value must be one too (an int for a float, an integral number for an int), else "
           "HparamError.")
      .def_property_readonly("trial_id", &Context::trial_id)
      .def_property_readonly("experiment_id", &Context::experiment_id)
      .def_property_readonly("allocation_id", &Context::allocation_id)
      .def_property_readonly("rank", &Context::rank)
      .def_property_readonly("world_size", &Context::world_size)
      .def_property_readonly("local_rank", &Context::local_rank)
      .def_property_readonly("local_world_size", &Context::local_world_size)
      .def_property_readonly("is_chief", &Context::is_chief)
      .def_property_readonly("agent_id", &Context::agent_id)
      .def_property_readonly("agent_address", &Context::agent_address)
      .def_property_readonly("max_length_batches", &Context::max_length_batches,
                             "searcher.max_length.batches (--batches in local mode); ConfigError when unset.")
      .def_property_readonly("seed", &Context::seed)
      .def_property_readonly(
          "latest_checkpoint",
          [](const Context& ctx) -> py::object {
            if (ctx.latest_checkpoint().empty()) return py::none();
            return py::str(ctx.latest_checkpoint());
          },
          "The directory of the checkpoint to resume from; None when starting afresh.")
      .def_property_readonly("remaining_args", &Context::remaining_args, "argv without the runtime's flags.")
      .def("report_training_metrics", &Context::report_training_metrics, py::arg("batches"),
           py::arg("metrics"), release,
           "Queues (prints, in local mode) {name: number} at `batches`. Only the chief sends.")
      .def("report_validation_metrics", &Context::report_validation_metrics, py::arg("batches"),
           py::arg("metrics"), release)
      .def("flush", &Flush, py::arg("timeout_s") = 60.0,
           "Waits until the master acknowledged every report so far; False on timeout or when some was "
           "refused.")
      .def("validation_due", &Context::validation_due, py::arg("batches"),
           "True when min_validation_period batches passed since the last validation.")
      .def_property_readonly("searcher", &Context::searcher, py::return_value_policy::reference_internal)
      .def_property_readonly("checkpoints", &Context::checkpoints,
                             py::return_value_policy::reference_internal)
      .def_property_readonly("preempt", &Context::preempt, py::return_value_policy::reference_internal)
      .def("__repr__", &Describe);
}

}  // namespace ring::trial::python
