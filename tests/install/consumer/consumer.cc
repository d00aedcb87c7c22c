// An application built against an installed collage (find_package(collage CONFIG), linking
// collage::collage) through the application API alone: it loads a backend plug-in built out
// of tree, loads a model, optimizes its placement, profiles the kept one and writes its report,
// saves the plan, runs the plan in a new session, and checks every output against the
// reference kernels ("native").
//
//   consumer MODEL PLUGIN WORK_DIR
//
// Prints what it did and exits 0, or names what failed and exits 1.
#include <collage/available_backends.h>
#include <collage/file_io.h>
#include <collage/report.h>
#include <collage/session.h>
#include <collage/version.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

namespace {

int Fail(const std::string& what, const collage::Status& status) {
  std::fprintf(stderr, "consumer: %s: %s\n", what.c_str(), status.message().c_str());
  return 1;
}

// Deterministic float32 inputs of the declared shapes.
std::map<std::string, collage::Tensor> MakeInputs(const collage::Session& session) {
  std::map<std::string, collage::Tensor> inputs;
  for (const collage::TensorInfo& info : session.inputs()) {
    collage::Tensor tensor(info.dtype, info.shape);
    float* data = tensor.data_as<float>();
    for (int64_t i = 0; i < tensor.num_elements(); ++i) data[i] = std::sin(0.37f * float(i)) * 2.0f;
    inputs.emplace(info.name, std::move(tensor));
  }
  return inputs;
}

// The largest |a - b| / (1 + |b|) over every output, or +inf when the outputs differ in kind.
double MaxError(const std::map<std::string, collage::Tensor>& got,
                const std::map<std::string, collage::Tensor>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (const auto& [name, expected] : want) {
    auto it = got.find(name);
    if (it == got.end() || it->second.shape() != expected.shape()) return INFINITY;
    std::vector<float> a = it->second.ToVector<float>(), b = expected.ToVector<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      double error = std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i])));
      if (!(error <= worst)) worst = error;  // NaN counts as the worst
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: consumer MODEL PLUGIN WORK_DIR\n");
    return 2;
  }
  const std::string model = argv[1], plugin = argv[2], work = argv[3];
  constexpr double kTolerance = 1e-4;

  collage::Status loaded = collage::LoadBackendPlugin(plugin);
  if (!loaded.ok()) return Fail("loading the plug-in", loaded);
  bool listed = false;
  for (const collage::BackendInfo& backend : collage::AvailableBackends()) {
    listed = listed || (backend.name == "plugin_example" && !backend.rules.empty());
  }
  if (!listed) {
    std::fprintf(stderr, "consumer: the loaded plug-in's backend is not listed with its rules\n");
    return 1;
  }

  collage::SessionOptions reference_options;
  reference_options.num_threads = 1;
  auto reference = collage::Session::LoadFile(model, reference_options);
  if (!reference.ok()) return Fail("loading " + model, reference.status());
  std::map<std::string, collage::Tensor> inputs = MakeInputs(**reference);
  auto want = (*reference)->Run(inputs);
  if (!want.ok()) return Fail("running on the reference kernels", want.status());

  // The plug-in's backend alone (native where it has no rule).
  collage::SessionOptions plugin_options = reference_options;
  plugin_options.backend = "plugin_example";
  auto on_plugin = collage::Session::LoadFile(model, plugin_options);
  if (!on_plugin.ok()) return Fail("loading on the plug-in's backend", on_plugin.status());
  if ((*on_plugin)->DescribePlacement().find("plugin_example") == std::string::npos) {
    std::fprintf(stderr, "consumer: the plug-in's backend runs no group:\n%s\n",
                 (*on_plugin)->DescribePlacement().c_str());
    return 1;
  }
  auto got = (*on_plugin)->Run(inputs);
  if (!got.ok()) return Fail("running on the plug-in's backend", got.status());
  double plugin_error = MaxError(*got, *want);
  if (!(plugin_error <= kTolerance)) {
    std::fprintf(stderr, "consumer: the plug-in's outputs differ from the reference: %g\n", plugin_error);
    return 1;
  }

  // Optimize among the plug-in and the reference kernels, measured by the installed worker.
  collage::OptimizeOptions optimize;
  optimize.backends = {"plugin_example"};
  optimize.cost_db_path = work + "/costs.sqlite";
  optimize.caches = collage::CacheState::kWarm;
  optimize.min_runs = 2;
  optimize.max_runs = 5;
  optimize.max_seconds = 0.02;
  collage::OptimizeReport report;
  collage::Status optimized = (*reference)->Optimize(optimize, &report);
  if (!optimized.ok()) return Fail("optimizing", optimized);
  // The kept placement's profile comes with the report; another one may be taken.
  auto in_run = collage::ProfileKeptPlacement(**reference);
  if (!in_run.ok()) return Fail("profiling the kept placement", in_run.status());
  if (report.in_run.nodes.size() != in_run->nodes.size()) {
    std::fprintf(stderr, "consumer: the report's profile has %zu steps, a new one %zu\n",
                 report.in_run.nodes.size(), in_run->nodes.size());
    return 1;
  }
  const std::string page = collage::PlacementReportHtml(**reference, report, *in_run);
  if (page.find("plugin_example") == std::string::npos) {
    std::fprintf(stderr, "consumer: the report does not name the plug-in's backend\n");
    return 1;
  }
  collage::Status written = collage::WriteFileAtomically(work + "/report.html", page);
  if (!written.ok()) return Fail("writing the report", written);
  for (const std::string& warning : report.warnings) {
    // The installed worker must be found beside the installed library, with the plug-in.
    if (warning.find("measured in this process") != std::string::npos) {
      std::fprintf(stderr, "consumer: optimize did not use the measurement worker: %s\n",
                   warning.c_str());
      return 1;
    }
  }
  const std::string plan = work + "/model.plan";
  collage::Status saved = (*reference)->SavePlan(plan);
  if (!saved.ok()) return Fail("saving the plan", saved);

  collage::SessionOptions planned_options;
  planned_options.plan_path = plan;
  auto planned = collage::Session::LoadFile(model, planned_options);
  if (!planned.ok()) return Fail("loading the plan", planned.status());
  auto from_plan = (*planned)->Run(inputs);
  if (!from_plan.ok()) return Fail("running the plan", from_plan.status());
  double plan_error = MaxError(*from_plan, *want);
  if (!(plan_error <= kTolerance)) {
    std::fprintf(stderr, "consumer: the plan's outputs differ from the reference: %g\n", plan_error);
    return 1;
  }
  std::printf("consumer: collage %s; %d nodes; plug-in error %.3g, plan (%s) error %.3g\n",
              collage::Version(), (*planned)->summary().num_nodes, plugin_error,
              collage::PlacementSourceName((*planned)->placement_source()).c_str(), plan_error);
  std::printf("%s\n", (*planned)->DescribePlacement().c_str());
  return 0;
}
