#include "cost/workers_choice.h"

#include <unistd.h>

#include <filesystem>

#include "collage/device_fingerprint.h"
#include "collage/sdk/errors.h"
#include "cost/ray_measurer.h"
#include "cost/worker_measurer.h"

namespace collage {
namespace {

constexpr char kRayClientPrefix[] = "ray://";
constexpr char kDispatcherName[] = "collage_ray_dispatch.py";

StatusOr<std::unique_ptr<Measurer>> StartRay(const WorkersChoice& choice,
                                             const BackendRegistry& registry,
                                             const std::vector<std::string>& backends) {
  RayOptions options;
  // The nodes run the worker at the path it has here: collage installed alike on each.
  std::vector<std::string> tried;
  options.worker.executable = FindMeasureWorker(choice.measure_worker, &tried);
  if (options.worker.executable.empty()) {
    return InvalidArgument(
        "--workers {} measures with collage_measure_worker on the Ray nodes, and none was "
        "found here (looked for {})",
        MeasureWorkersName(choice.workers), fmt::join(tried, ", "));
  }
  options.dispatcher =
      (std::filesystem::path(options.worker.executable).parent_path() / kDispatcherName).string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(options.dispatcher, error)) {
    return NotFound("--workers {}: the Ray dispatcher {} is missing (it is built and installed "
                    "beside collage_measure_worker)",
                    MeasureWorkersName(choice.workers), options.dispatcher);
  }
  // A bare name is looked up on PATH, as a shell would.
  options.python = choice.ray_python.empty() ? "python3" : choice.ray_python;
  if (options.python.find('/') == std::string::npos) {
    const std::string found = FindOnPath(options.python);
    if (found.empty()) {
      return NotFound(
          "--workers {}: the Python that runs the Ray dispatcher, '{}', is not on PATH (choose "
          "one that has Ray: COLLAGE_RAY_PYTHON, or OptimizeOptions::ray_python)",
          MeasureWorkersName(choice.workers), options.python);
    }
    options.python = found;
  } else if (::access(options.python.c_str(), X_OK) != 0) {
    return NotFound("--workers {}: the Python that runs the Ray dispatcher, {}, is not an "
                    "executable file",
                    MeasureWorkersName(choice.workers), options.python);
  }
  options.address = choice.workers.ray_address.empty() ? "auto" : choice.workers.ray_address;
  options.resource = DeviceResourceName();
  options.device = DeviceFingerprint();
  options.worker.plugin_paths = registry.plugin_paths();
  options.worker.backends = WorkerBackends(registry, backends);
  options.worker.timeout_seconds = choice.timeout_seconds;
  options.worker.cancel = choice.cancel;
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<RayMeasurer> ray, RayMeasurer::Start(std::move(options)));
  return std::unique_ptr<Measurer>(std::move(ray));
}

}  // namespace

StatusOr<MeasureWorkers> MeasureWorkersNamed(std::string_view name) {
  if (name.empty() || name == "local") return MeasureWorkers();
  if (name == "in-process") return MeasureWorkers::InProcess();
  if (name == "ray") return MeasureWorkers(MeasureWorkers::Kind::kRay);
  if (name.rfind(kRayClientPrefix, 0) == 0 && name.size() > sizeof(kRayClientPrefix) - 1) {
    return MeasureWorkers(MeasureWorkers::Kind::kRay, std::string(name));
  }
  return InvalidArgument(
      "workers '{}': expected local (a worker process here), in-process, ray (the Ray cluster "
      "of $RAY_ADDRESS or of this machine) or ray://HOST:PORT (a cluster's Ray Client server)",
      name);
}

void UseMeasureWorkerSetting(std::string_view value, OptimizeOptions* options) {
  if (value.empty()) return;
  if (value == "in-process") {
    if (options->workers.kind == MeasureWorkers::Kind::kLocalWorker) {
      options->workers = MeasureWorkers::InProcess();
    }
  } else if (options->measure_worker.empty()) {
    options->measure_worker = std::string(value);
  }
}

std::string MeasureWorkersName(const MeasureWorkers& workers) {
  switch (workers.kind) {
    case MeasureWorkers::Kind::kLocalWorker: return "local";
    case MeasureWorkers::Kind::kInProcess: return "in-process";
    case MeasureWorkers::Kind::kRay: return workers.ray_address.empty() ? "ray" : workers.ray_address;
  }
  return "?";
}

StatusOr<std::unique_ptr<Measurer>> ChooseWorkers(const WorkersChoice& choice,
                                                  const BackendRegistry& registry,
                                                  const std::vector<std::string>& backends,
                                                  std::vector<std::string>* warnings) {
  switch (choice.workers.kind) {
    case MeasureWorkers::Kind::kInProcess:
      COLLAGE_RETURN_IF_ERROR(CheckMeasureTimeout(choice.timeout_seconds));
      return std::unique_ptr<Measurer>(new InProcessMeasurer(registry));
    case MeasureWorkers::Kind::kLocalWorker:
      return ChooseMeasurer(choice.measure_worker, choice.timeout_seconds, registry, backends,
                            warnings, choice.cancel);
    case MeasureWorkers::Kind::kRay: break;
  }
  COLLAGE_RETURN_IF_ERROR(CheckMeasureTimeout(choice.timeout_seconds));
  return StartRay(choice, registry, backends);
}

}  // namespace collage
