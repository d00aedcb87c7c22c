// `collage run MODEL --input NAME=FILE ...`: one inference, a one-line summary of each output;
// with --output-dir DIR the outputs are also saved as .npy and .pb.
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include "collage/native_backend.h"
#include "collage/normalized_error.h"
#include "collage/printable_text.h"
#include "collage/tensor_file.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct RunFlags {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  bool random_inputs = false;
  unsigned seed = 0;
  int threads = 0;
  std::string backend = kNativeBackend;
  std::string plan;
  std::vector<std::string> plugin_dirs;
  bool strict_nan = false;
  bool check = false;
  double tolerance = 1e-3;
  bool tolerance_given = false;  // --tolerance on the command line
};

// File-name-safe version of a tensor name ("output:0" → "output_0").
std::string FileStem(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return s.empty() ? "output" : s;
}

void PrintSummary(const std::string& name, const Tensor& t) {
  std::printf("  %-24s %-8s %-16s", PrintableText(name).c_str(), DTypeName(t.dtype()),
              ShapeToString(t.shape()).c_str());
  std::vector<double> v = t.ToVector<double>();
  if (!v.empty()) {
    double lo = v[0], hi = v[0], sum = 0;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    std::printf(" min %.6g max %.6g mean %.6g", lo, hi, sum / static_cast<double>(v.size()));
  }
  std::printf("\n");
}

// --check on the native backend alone would compare the reference kernels with themselves.
bool ChecksNothing(const RunFlags& flags) { return flags.check && flags.plan.empty() && flags.backend == kNativeBackend; }

// Output `name`'s description (its quantization tolerances); an empty one if none.
TensorInfo InfoOf(const std::vector<TensorInfo>& outputs, const std::string& name) {
  for (const TensorInfo& info : outputs) {
    if (info.name == name) return info;
  }
  return {};
}

// Runs the model again on the reference kernels (the native backend alone) and compares each
// output relative to its own magnitude.
int CheckAgainstReference(const RunFlags& flags, const SessionOptions& options,
                          const std::map<std::string, Tensor>& inputs,
                          const std::map<std::string, Tensor>& outputs, double tolerance,
                          const char* tolerance_source) {
  SessionOptions reference_options = options;
  reference_options.backend = kNativeBackend;
  reference_options.plan_path.clear();
  auto reference = Session::LoadFile(flags.model, reference_options);
  if (!reference.ok()) return ReportError(reference.status());
  auto expected = (*reference)->Run(inputs);
  if (!expected.ok()) return ReportError(expected.status());
  bool ok = true;
  std::printf(
      "check against the reference kernels (tolerance %.1e%s, error relative to each output's "
      "magnitude):\n",
      tolerance, tolerance_source);
  for (const auto& [name, tensor] : *expected) {
    std::string problem;
    double error = MagnitudeRelativeError(outputs.at(name), tensor, &problem);
    bool pass = error <= tolerance;
    // A quantized output may round a step or a few away from the reference; one computed from
    // activations quantized at run time may be off by a fraction of its magnitude.
    const TensorInfo info = InfoOf((*reference)->outputs(), name);
    const double allowed = info.quantization_tolerance;
    const bool within_steps =
        !pass && WithinQuantizationTolerance(outputs.at(name), tensor, allowed);
    const bool within_dynamic = !pass && !within_steps && info.dynamic_quantization_tolerance > 0 &&
                                error <= info.dynamic_quantization_tolerance;
    pass = pass || within_steps || within_dynamic;
    ok = ok && pass;
    std::string why;
    if (within_steps)
      why = fmt::format(" (within the model's quantization steps, {:.3g})", allowed);
    if (within_dynamic) {
      why = fmt::format(" (within the model's run-time quantization of activations, {:.3g})",
                        info.dynamic_quantization_tolerance);
    }
    std::printf("  %-24s %s  error %.3g%s%s\n", name.c_str(), pass ? "ok  " : "FAIL", error,
                why.c_str(), problem.empty() ? "" : (" (" + problem + ")").c_str());
  }
  if (!ok) {
    return ReportError(Status(StatusCode::kInternal,
                              fmt::format("outputs of the {} placement differ from the reference",
                                          options.plan_path.empty() ? "backend '" + options.backend + "'"
                                                                    : "plan '" + options.plan_path + "'")));
  }
  return 0;
}

int RunRun(const RunFlags& flags) {
  if (ChecksNothing(flags)) {
    return ReportError(InvalidArgument(
        "--check compares a placement with the reference kernels (the native backend alone), and "
        "this run is on native alone: give --backend NAME or --plan PLAN to check it"));
  }
  if (Status s = LoadPlugins(flags.plugin_dirs); !s.ok()) return ReportError(s);
  SessionOptions options;
  options.shapes_per_run = false;  // the command line fixes every shape (commands.h)
  options.num_threads = flags.threads;
  options.backend = flags.backend;
  options.plan_path = flags.plan;
  options.strict_non_finite = flags.strict_nan;
  if (Status s = ParseShapeFlags(flags.shapes, options); !s.ok()) return ReportError(s);
  auto files = ReadInputFiles(flags.inputs);
  if (!files.ok()) return ReportError(files.status());
  FixShapesFromInputFiles(*files, options);
  auto session = Session::LoadFile(flags.model, options);
  if (!session.ok()) return ReportError(session.status());
  PrintWarnings(**session);
  auto inputs = LoadInputs(**session, std::move(*files), flags.random_inputs, flags.seed);
  if (!inputs.ok()) return ReportError(inputs.status());
  auto outputs = (*session)->Run(*inputs);
  if (!outputs.ok()) return ReportError(outputs.status());

  if (!flags.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.output_dir, ec);
    if (ec) {
      return ReportError(Status(StatusCode::kIoError, fmt::format("cannot create {}: {}",
                                                                  flags.output_dir, ec.message())));
    }
  }
  std::printf("threads: %d\n%s\n", (*session)->num_threads(), PlacementSummary(**session).c_str());
  std::printf("outputs:\n");
  // Names that differ only in characters a file name cannot hold ("a/b", "a?b", "a_b") would
  // share a file: a later one gets a numbered stem, and the run says so.
  std::set<std::string> stems_used;
  std::vector<std::string> renamed;
  for (const auto& [name, tensor] : *outputs) {
    PrintSummary(name, tensor);
    if (flags.output_dir.empty()) continue;
    const std::string wanted = FileStem(name);
    std::string stem = wanted;
    for (int n = 2; !stems_used.insert(stem).second; ++n) stem = wanted + "_" + std::to_string(n);
    if (stem != wanted) {
      renamed.push_back(fmt::format("output '{}' is saved as {}.npy ({}.npy is another output's)",
                                    PrintableText(name), stem, wanted));
    }
    const std::string path = (std::filesystem::path(flags.output_dir) / stem).string();
    if (Status s = WriteTensorFiles(tensor, name, path); !s.ok()) return ReportError(s);
  }
  for (const std::string& note : renamed) std::printf("note: %s\n", note.c_str());
  if (flags.output_dir.empty()) {
    std::printf("not saved (--output-dir DIR saves every output as .npy and .pb)\n");
  } else {
    std::printf("written to %s (.npy and .pb)\n", flags.output_dir.c_str());
  }
  if (flags.plan.empty() && !(*session)->compiles_per_run()) PrintHowToPlace(flags.model, flags.backend);
  if (flags.check) {
    // A plan with reduced-precision groups is held to the budget it was made under, unless
    // --tolerance says otherwise.
    const double budget = (*session)->placement_tolerance();
    if (!flags.tolerance_given && budget > flags.tolerance) {
      return CheckAgainstReference(flags, options, *inputs, *outputs, budget,
                                   ", the plan's accuracy budget: it has reduced-precision groups");
    }
    return CheckAgainstReference(flags, options, *inputs, *outputs, flags.tolerance, "");
  }
  return 0;
}

}  // namespace

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a model once and print a summary of its outputs (saved with --output-dir)");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--input", flags->inputs,
                  "Input tensor: NAME=FILE.npy or NAME=FILE.pb (repeatable; its shape fixes the "
                  "input's dynamic dims)");
  cmd->add_flag("--random-inputs", flags->random_inputs, "Random data (seeded) for inputs not given");
  cmd->add_option("--seed", flags->seed, "Seed for --random-inputs");
  cmd->add_option("--shape", flags->shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--output-dir", flags->output_dir, "Write every output as NAME.npy and NAME.pb here");
  cmd->add_option("--threads", flags->threads,
                  "Threads (0 = the count --plan was measured with, else one per core)")
      ->check(NonEmptyValue());
  cmd->add_option("--backend", flags->backend,
                  "Run every node this backend has a rule for on it, the rest on native")
      ->capture_default_str();
  cmd->add_option("--plan", flags->plan, "Run the placement saved by `collage optimize --save-plan`")
      ->excludes(cmd->get_option("--backend"));
  AddStrictNanOption(cmd, flags->strict_nan);
  AddPluginOption(cmd, flags->plugin_dirs);
  cmd->add_flag("--check", flags->check,
                "Also run on the reference kernels (native alone) and compare the outputs (exit 1 "
                "if they differ); needs --backend or --plan");
  AddToleranceOption(
      cmd, flags->tolerance,
      "Largest error --check accepts, relative to each output's magnitude: "
      "max|a-b| / max(max|reference|, 1e-12) (default 1e-3, or the accuracy budget of "
      "a --plan with reduced-precision groups)");
  cmd->callback([flags, cmd, &exit_code] {
    flags->tolerance_given = cmd->count("--tolerance") > 0;
    exit_code = RunRun(*flags);
  });
}

}  // namespace collage::cli
