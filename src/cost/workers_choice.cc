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

bool IsRay(const std::string& workers) {
  return workers == "ray" || workers.rfind(kRayClientPrefix, 0) == 0;
}

StatusOr<std::unique_ptr<Measurer>> StartRay(const WorkersChoice& choice,
                                             const BackendRegistry& registry,
                                             const std::vector<std::string>& backends) {
  RayOptions options;
  // The nodes run the worker at the path it has here: collage installed alike on each.
  std::vector<std::string> tried;
  options.worker.executable = FindMeasureWorker(choice.measure_worker, &tried);
  if (options.worker.executable.empty() || options.worker.executable == kInProcessMeasurement) {
    return InvalidArgument(
        "--workers {} measures with collage_measure_worker on the Ray nodes, and none was "
        "found here (looked for {})",
        choice.workers, fmt::join(tried, ", "));
  }
  options.dispatcher =
      (std::filesystem::path(options.worker.executable).parent_path() / kDispatcherName).string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(options.dispatcher, error)) {
    return NotFound("--workers {}: the Ray dispatcher {} is missing (it is built and installed "
                    "beside collage_measure_worker)",
                    choice.workers, options.dispatcher);
  }
  // A bare name is looked up on PATH, as a shell would.
  options.python = choice.ray_python.empty() ? "python3" : choice.ray_python;
  if (options.python.find('/') == std::string::npos) {
    const std::string found = FindOnPath(options.python);
    if (found.empty()) {
      return NotFound(
          "--workers {}: the Python that runs the Ray dispatcher, '{}', is not on PATH (choose "
          "one that has Ray: COLLAGE_RAY_PYTHON, or OptimizeOptions::ray_python)",
          choice.workers, options.python);
    }
    options.python = found;
  } else if (::access(options.python.c_str(), X_OK) != 0) {
    return NotFound("--workers {}: the Python that runs the Ray dispatcher, {}, is not an "
                    "executable file",
                    choice.workers, options.python);
  }
  options.address = choice.workers == "ray" ? "auto" : choice.workers;
  options.resource = DeviceResourceName();
  options.device = DeviceFingerprint();
  options.worker.plugin_paths = registry.plugin_paths();
  options.worker.backends = WorkerBackends(registry, backends);
  options.worker.timeout_seconds = choice.timeout_seconds;
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<RayMeasurer> ray, RayMeasurer::Start(std::move(options)));
  return std::unique_ptr<Measurer>(std::move(ray));
}

}  // namespace

Status CheckWorkers(const std::string& workers) {
  if (workers.empty() || workers == "local" || workers == kInProcessMeasurement ||
      workers == "ray") {
    return Status();
  }
  if (workers.rfind(kRayClientPrefix, 0) == 0 && workers.size() > sizeof(kRayClientPrefix) - 1)
    return Status();
  return InvalidArgument(
      "workers '{}': expected local (a worker process here), in-process, ray (the Ray cluster "
      "of $RAY_ADDRESS or of this machine) or ray://HOST:PORT (a cluster's Ray Client server)",
      workers);
}

StatusOr<std::unique_ptr<Measurer>> ChooseWorkers(const WorkersChoice& choice,
                                                  const BackendRegistry& registry,
                                                  const std::vector<std::string>& backends,
                                                  std::vector<std::string>* warnings) {
  COLLAGE_RETURN_IF_ERROR(CheckWorkers(choice.workers));
  if (!IsRay(choice.workers)) {
    const std::string configured =
        choice.workers == kInProcessMeasurement ? kInProcessMeasurement : choice.measure_worker;
    return ChooseMeasurer(configured, choice.timeout_seconds, registry, backends, warnings);
  }
  COLLAGE_RETURN_IF_ERROR(CheckMeasureTimeout(choice.timeout_seconds));
  return StartRay(choice, registry, backends);
}

}  // namespace collage
