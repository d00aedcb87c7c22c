// collage._collage.Session: a loaded model that runs with numpy arrays. The package's
// InferenceSession (python/collage/_session.py) gives it ONNX Runtime's interface.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "collage/file_io.h"
#include "collage/report.h"
#include "collage/session.h"
#include "numpy_tensor.h"
#include "status_error.h"
#include "collage/sdk/errors.h"

namespace nb = nanobind;

namespace collage::python {

namespace {

// (name, dtype name such as "float32", shape) of each input or output.
using TensorInfoTuple = std::tuple<std::string, std::string, std::vector<int64_t>>;

std::vector<TensorInfoTuple> Describe(const std::vector<TensorInfo>& infos) {
  std::vector<TensorInfoTuple> described;
  for (const TensorInfo& info : infos) described.emplace_back(info.name, DTypeName(info.dtype), info.shape);
  return described;
}

std::string Names(const std::vector<TensorInfo>& infos) {
  std::string names;
  for (const TensorInfo& info : infos) names += (names.empty() ? "" : ", ") + info.name;
  return names;
}

// The model's own description as a dict of ONNX Runtime's ModelMetadata fields.
nb::dict MetadataDict(const ModelMetadata& m) {
  nb::dict d;
  d["producer_name"] = m.producer_name;
  d["producer_version"] = m.producer_version;
  d["domain"] = m.domain;
  d["version"] = m.model_version;
  d["description"] = m.description;
  d["graph_name"] = m.graph_name;
  d["graph_description"] = m.graph_description;
  d["custom_metadata_map"] = m.custom;
  return d;
}

class PySession {
 public:
  // `model`: a file path, or the model's bytes when `model_bytes` is given.
  PySession(const std::string& path, const std::optional<nb::bytes>& model_bytes, int threads,
            const std::string& plan, const std::string& backend,
            const std::map<std::string, std::vector<int64_t>>& shapes, bool strict_nan) {
    SessionOptions options;
    options.num_threads = threads;
    options.plan_path = plan;
    options.backend = backend;
    options.strict_non_finite = strict_nan;
    for (const auto& [name, shape] : shapes) {
      options.input_shapes[name] = shape;
      options.input_shape_origins[name] = "shapes['" + name + "']";  // as errors name it
    }
    std::optional<std::string> bytes;
    if (model_bytes) bytes.emplace(model_bytes->c_str(), model_bytes->size());
    nb::gil_scoped_release release;  // loading compiles every kernel: other threads may go on
    session_ = ValueOrThrow(bytes ? Session::LoadBytes(*bytes, options)
                                  : Session::LoadFile(path, options));
  }

  std::vector<TensorInfoTuple> inputs() const { return Describe(session_->inputs()); }
  int num_compiled_shapes() const { return session_->num_compiled_shapes(); }
  std::vector<TensorInfoTuple> outputs() const { return Describe(session_->outputs()); }

  // Runs on `feeds` (name → C-contiguous array, borrowed for the run) and returns the outputs
  // named, in that order (every output in the model's order when none are named). Session::Run
  // checks names, dtypes and shapes and says what is wrong.
  std::vector<nb::object> Run(const std::optional<std::vector<std::string>>& output_names,
                              const std::map<std::string, InputArray>& feeds, bool profiled) {
    const std::vector<std::string> wanted = output_names ? *output_names : OutputNames();
    for (const std::string& name : wanted) {
      if (!IsOutput(name)) {
        throw StatusError(InvalidArgument("the model has no output named '{}' (its outputs: {})",
                                          name, Names(session_->outputs())));
      }
    }
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, array] : feeds) inputs[name] = BorrowArray(name, array);
    RunProfile profile;
    auto ran = [&] {
      // Session::Run may be called from several threads at once; `feeds` keeps the arrays
      // alive meanwhile.
      nb::gil_scoped_release release;
      const auto start = std::chrono::steady_clock::now();
      auto outputs = session_->Run(inputs, profiled ? &profile : nullptr);
      if (profiled && outputs.ok()) Record(start, std::move(profile));
      return outputs;
    }();
    std::map<std::string, Tensor> produced = ValueOrThrow(std::move(ran));
    std::vector<nb::object> arrays;
    std::set<std::string> handed_out;
    for (const std::string& name : wanted) {
      // The array takes over the tensor's buffer; a name asked for twice gets a copy the
      // second time, so that no two arrays alias.
      const Tensor& tensor = produced.at(name);
      const bool again = !handed_out.insert(name).second;
      arrays.push_back(TensorToNumpy(name, again ? tensor.Clone() : tensor));
    }
    return arrays;
  }

  // Writes the runs profiled since the last call as a Chrome trace to `path`, and forgets them.
  void EndProfiling(const std::string& path) {
    std::vector<TracedRun> runs;
    {
      std::lock_guard<std::mutex> lock(profile_mutex_);
      runs.swap(traced_);
      profile_start_.reset();
    }
    ThrowIfError(WriteFileAtomically(path, ChromeTraceJson(runs)));
  }
  nb::dict metadata() const { return MetadataDict(session_->metadata()); }

  std::string placement() const { return session_->DescribePlacement(); }
  std::string placement_source() const { return PlacementSourceName(session_->placement_source()); }
  std::vector<std::string> warnings() const { return session_->warnings(); }

 private:
  std::vector<std::string> OutputNames() const {
    std::vector<std::string> names;
    for (const TensorInfo& info : session_->outputs()) names.push_back(info.name);
    return names;
  }
  bool IsOutput(const std::string& name) const {
    for (const TensorInfo& info : session_->outputs()) {
      if (info.name == name) return true;
    }
    return false;
  }

  void Record(std::chrono::steady_clock::time_point start, RunProfile profile) {
    std::lock_guard<std::mutex> lock(profile_mutex_);
    if (!profile_start_) profile_start_ = start;
    const double start_ms = std::chrono::duration<double, std::milli>(start - *profile_start_).count();
    traced_.push_back({start_ms, std::move(profile)});
  }

  std::unique_ptr<Session> session_;
  std::mutex profile_mutex_;  // runs may be profiled from several threads
  std::optional<std::chrono::steady_clock::time_point> profile_start_;  // the first profiled run's
  std::vector<TracedRun> traced_;
};

}  // namespace

void BindSession(nb::module_& m) {
  nb::class_<PySession>(m, "Session")
      .def(nb::init<const std::string&, const std::optional<nb::bytes>&, int, const std::string&,
                    const std::string&, const std::map<std::string, std::vector<int64_t>>&, bool>(),
           nb::arg("path"), nb::arg("model_bytes").none(), nb::arg("threads"), nb::arg("plan"),
           nb::arg("backend"), nb::arg("shapes"), nb::arg("strict_nan"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("run", &PySession::Run, nb::arg("output_names").none(), nb::arg("feeds"),
           nb::arg("profiled") = false)
      .def("end_profiling", &PySession::EndProfiling, nb::arg("path"))
      .def("metadata", &PySession::metadata)
      .def("placement", &PySession::placement)
      .def("placement_source", &PySession::placement_source)
      .def("warnings", &PySession::warnings)
      .def("num_compiled_shapes", &PySession::num_compiled_shapes);
}

}  // namespace collage::python
