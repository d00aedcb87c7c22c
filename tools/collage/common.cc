#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>

#include <fmt/format.h>

#include "collage/available_backends.h"
#include "collage/printable_text.h"
#include "collage/random_tensor.h"
#include "collage/report.h"
#include "collage/shape_text.h"
#include "collage/tensor_file.h"
#include "commands.h"

namespace collage::cli {

int ReportError(const Status& status) {
  std::fprintf(stderr, "error: %s\n", PrintableText(status.message(), "\n\t").c_str());
  // 128 + SIGINT, as a shell reports a command it interrupted.
  return status.code() == StatusCode::kCancelled ? 130 : 1;
}

Status ParseShapeFlags(const std::vector<std::string>& flags, SessionOptions& options) {
  for (const std::string& flag : flags) {
    COLLAGE_RETURN_IF_ERROR(ParseShapeOverride(flag, options.input_shapes));
  }
  return Status::Ok();
}

StatusOr<InputFiles> ReadInputFiles(const std::vector<std::string>& input_flags) {
  InputFiles files;
  for (const std::string& flag : input_flags) {
    size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
      return InvalidArgument(fmt::format("--input '{}': expected NAME=FILE", flag));
    }
    std::string name = flag.substr(0, eq);
    if (files.tensors.count(name) != 0) {
      return InvalidArgument(fmt::format("--input {}: input '{}' is given twice", flag, name));
    }
    COLLAGE_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(flag.substr(eq + 1)));
    files.tensors[name] = std::move(t);
    files.flags[name] = "--input " + flag;
  }
  return files;
}

void FixShapesFromInputFiles(const InputFiles& files, SessionOptions& options) {
  for (const auto& [name, tensor] : files.tensors) {
    if (options.input_shapes.count(name) != 0) continue;  // --shape says
    options.input_shapes[name] = tensor.shape();
    options.input_shape_origins[name] = files.flags.at(name);
  }
}

StatusOr<std::map<std::string, Tensor>> LoadInputs(const Session& session, InputFiles files,
                                                   bool random_rest, unsigned seed) {
  // A file for no input of the model was refused at load (its shape named no input), and
  // Session::Run refuses any other name.
  std::map<std::string, Tensor> inputs = std::move(files.tensors);
  std::mt19937 rng(seed);
  std::string missing;
  for (const TensorInfo& info : session.inputs()) {
    if (inputs.count(info.name)) continue;
    if (random_rest) {
      try {
        inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
      } catch (const std::bad_alloc&) {
        return InvalidArgument(fmt::format(
            "out of memory making random input '{}' ({} {}); a smaller --shape "
            "needs less",
            info.name, DTypeName(info.dtype), ShapeToString(info.shape)));
      }
    } else {
      missing += fmt::format("{}{} ({} {})", missing.empty() ? "" : ", ", info.name,
                             DTypeName(info.dtype), ShapeToString(info.shape));
    }
  }
  if (!missing.empty()) {
    return InvalidArgument(fmt::format(
        "no data for input(s) {}; pass --input NAME=FILE.npy|.pb or --random-inputs", missing));
  }
  return inputs;
}

std::string FormatMillis(double ms) {
  if (ms >= 1.0) return fmt::format("{:.2f} ms", ms);
  if (ms >= 0.01) return fmt::format("{:.0f} us", ms * 1000.0);
  return fmt::format("{:.2f} us", ms * 1000.0);
}

std::string PlacementSummary(const Session& session) {
  return "placement (" + PlacementSourceName(session.placement_source()) +
         "): " + session.DescribePlacement() + "; " +
         std::to_string(session.num_layout_conversions()) + " layout conversions";
}

void PrintHowToPlace(const std::string& model, const std::string& backend) {
  std::printf("note: this ran every node it could on %s; `collage optimize %s --save-plan "
              "MODEL.plan` measures the backends on this machine for a faster placement, then "
              "--plan MODEL.plan runs it\n",
              backend.c_str(), PrintableText(model).c_str());
}

void PrintWarnings(const Session& session) {
  for (const std::string& warning : session.warnings())
    std::fprintf(stderr, "warning: %s\n", PrintableText(warning).c_str());
}

const CLI::Validator& NonEmptyValue() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        return text.find_first_not_of(" ,") == std::string::npos ? "needs a value" : std::string();
      },
      "");
  return validator;
}

void AddToleranceOption(CLI::App* cmd, double& tolerance, const std::string& description) {
  const CLI::Validator finite_non_negative(
      [](std::string& text) -> std::string {
        double value = 0;
        try {
          size_t used = 0;
          value = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (!std::isfinite(value) || value < 0) return "must be a finite number >= 0, not " + text;
        return std::string();
      },
      "TOLERANCE>=0");
  cmd->add_option("--tolerance", tolerance, description)
      ->check(finite_non_negative)
      ->capture_default_str();
}

void AddStrictNanOption(CLI::App* cmd, bool& strict_non_finite) {
  cmd->add_flag("--strict-nan", strict_non_finite,
                "Only rules that propagate NaN and infinities as the ONNX spec does (slower: fewer "
                "fused kernels)");
}

std::string CostDbLocation(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("COLLAGE_COST_DB");
  return env != nullptr ? env : "";
}

void AddPluginOption(CLI::App* cmd, std::vector<std::string>& plugin_dirs) {
  cmd->add_option("--backend-path", plugin_dirs,
                  "Load the backend plug-ins (lib*.so) in this folder first (repeatable; also "
                  "COLLAGE_BACKEND_PATH=DIR[:DIR])");
}

Status LoadPlugins(const std::vector<std::string>& plugin_dirs) {
  std::vector<std::string> dirs;
  // COLLAGE_BACKEND_PATH=DIR[:DIR...] adds folders to every command, like --backend-path.
  if (const char* env = std::getenv("COLLAGE_BACKEND_PATH"); env != nullptr) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.insert(dirs.end(), plugin_dirs.begin(), plugin_dirs.end());
  for (const std::string& dir : dirs) {
    COLLAGE_RETURN_IF_ERROR(LoadBackendPlugins(dir));
  }
  return Status();
}

}  // namespace collage::cli
