#include "conformance_case.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "collage/sdk/errors.h"
#include "collage/session.h"
#include "collage/shape_text.h"
#include "onnx/onnx_import.h"
#include "onnx/tensor_proto.h"

namespace collage::conformance {
namespace fs = std::filesystem;

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kSkip: return "SKIP";
  }
  return "?";
}

namespace {

CaseResult Fail(std::string message) { return {Outcome::kFail, std::move(message)}; }

// The number N of a name "<prefix>N<suffix>", or -1 if the name is not of that form.
int64_t NumberIn(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

// The entries "<prefix>0<suffix>", "<prefix>1<suffix>", ... of `dir` in numeric order (so 10
// comes after 9). A gap in the numbering means a damaged case.
StatusOr<std::vector<fs::path>> NumberedEntries(const fs::path& dir, const std::string& prefix,
                                                const std::string& suffix) {
  std::map<int64_t, fs::path> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const int64_t n = NumberIn(entry.path().filename().string(), prefix, suffix);
    if (n >= 0) found[n] = entry.path();
  }
  if (ec) return IoError("{}: cannot list: {}", dir.string(), ec.message());
  std::vector<fs::path> out;
  for (const auto& [n, path] : found) {
    if (n != static_cast<int64_t>(out.size())) {
      return InvalidArgument("{}: {}{}{} is missing", dir.string(), prefix, out.size(), suffix);
    }
    out.push_back(path);
  }
  return out;
}

// Calls `line_fn` with each line of a settings file that is not blank, without its '#'
// comment and surrounding blanks; an error gets the file and line number.
Status ForEachSettingLine(const fs::path& path,
                          const std::function<Status(const std::string&)>& line_fn) {
  std::ifstream in(path);
  if (!in) return IoError("{}: cannot open", path.string());
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    Status s = line_fn(line);
    if (!s.ok()) return s.WithContext(fmt::format("{}:{}", path.string(), line_number));
  }
  return Status::Ok();
}

// shapes.txt: one "name=1x3x224x224" per line.
Status ReadShapesFile(const fs::path& path, std::map<std::string, Shape>& shapes) {
  return ForEachSettingLine(
      path, [&](const std::string& line) { return ParseShapeOverride(line, shapes); });
}

// tolerance.txt: one "OUTPUT atol=VALUE" or "OUTPUT steps=N" per line (the output's name may
// hold spaces): VALUE is added to that output's absolute tolerance, N integer steps are allowed
// in an integer output (a quantized model's output may differ by a quantization step or two).
Status ReadToleranceFile(const fs::path& path, std::map<std::string, Tolerance>& per_output,
                         const Tolerance& base) {
  return ForEachSettingLine(path, [&](const std::string& line) -> Status {
    const size_t space = line.rfind(' ');
    const size_t equals = line.find('=', space == std::string::npos ? 0 : space);
    double value = -1;
    if (space != std::string::npos && equals != std::string::npos) {
      try {
        size_t used = 0;
        const std::string number = line.substr(equals + 1);
        value = std::stod(number, &used);
        if (used != number.size()) value = -1;
      } catch (const std::exception&) {
        value = -1;
      }
    }
    const std::string key =
        equals == std::string::npos ? "" : line.substr(space + 1, equals - space - 1);
    if (value < 0 || (key != "atol" && key != "steps")) {
      return InvalidArgument("expected 'OUTPUT atol=NUMBER' or 'OUTPUT steps=N', got '{}'", line);
    }
    auto [it, added] = per_output.emplace(line.substr(0, space), base);
    if (key == "atol") {
      it->second.atol = base.atol + value;
    } else {
      it->second.int_steps = static_cast<int64_t>(value);
    }
    return Status::Ok();
  });
}

std::string Names(const std::vector<TensorInfo>& infos) {
  std::vector<std::string> names;
  for (const TensorInfo& info : infos) names.push_back("'" + info.name + "'");
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

bool HasName(const std::vector<TensorInfo>& infos, const std::string& name) {
  return std::any_of(infos.begin(), infos.end(),
                     [&](const TensorInfo& info) { return info.name == name; });
}

// Prefix of RunDataSet's answer when the run was refused as unsupported.
constexpr const char* kUnsupportedAtRun = "unsupported at run time: ";

// Runs one test_data_set folder; returns an empty string on success, else what went wrong.
// ONNX's test-data generator writes bfloat16 tensors as uint16 (numpy has no bfloat16): the
// same bits, read as what the model declares.
Tensor AsBFloat16IfStoredAsUInt16(const Tensor& tensor, DType wanted) {
  if (wanted != DType::kBFloat16 || tensor.dtype() != DType::kUInt16) return tensor;
  Tensor bits(DType::kBFloat16, tensor.shape());
  if (tensor.nbytes() > 0) std::memcpy(bits.data(), tensor.data(), tensor.nbytes());
  return bits;
}

DType DeclaredDType(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& info : infos) {
    if (info.name == name) return info.dtype;
  }
  return DType::kUndefined;
}

std::string RunDataSet(Session& session, const fs::path& data_dir, const CaseOptions& options,
                       const std::map<std::string, Tolerance>& per_output) {
  StatusOr<std::vector<fs::path>> input_files = NumberedEntries(data_dir, "input_", ".pb");
  if (!input_files.ok()) return input_files.status().ToString();
  StatusOr<std::vector<fs::path>> output_files = NumberedEntries(data_dir, "output_", ".pb");
  if (!output_files.ok()) return output_files.status().ToString();
  if (output_files->empty()) return data_dir.string() + " holds no output_N.pb";

  // The i-th input file feeds the i-th graph input unless its TensorProto names the input.
  const std::vector<TensorInfo>& model_inputs = session.inputs();
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < input_files->size(); ++i) {
    const std::string file = (*input_files)[i].filename().string();
    std::string name;
    StatusOr<Tensor> tensor = ReadTensorProtoFile((*input_files)[i].string(), &name);
    if (!tensor.ok()) return fmt::format("reading {}: {}", file, tensor.status().ToString());
    if (name.empty()) {
      if (i >= model_inputs.size()) {
        return fmt::format("{} has no name and the model has only {} input(s) ({})", file,
                           model_inputs.size(), Names(model_inputs));
      }
      name = model_inputs[i].name;
    } else if (!HasName(model_inputs, name)) {
      return fmt::format("{} is for input '{}', which the loaded model does not have (its "
                         "inputs: {})", file, name, Names(model_inputs));
    }
    if (!feeds.emplace(name, AsBFloat16IfStoredAsUInt16(*tensor, DeclaredDType(model_inputs, name)))
             .second) {
      return fmt::format("{} feeds input '{}' a second time", file, name);
    }
  }
  if (feeds.size() != model_inputs.size()) {
    return fmt::format("the loaded model has {} input(s) ({}), the data set gives {}",
                       model_inputs.size(), Names(model_inputs), feeds.size());
  }

  StatusOr<std::map<std::string, Tensor>> results = session.Run(feeds);
  if (!results.ok()) {
    // Some refusals can only happen at run time (Dropout whose training_mode is an input
    // that turns out true): collage says clearly it does not do that, which is a skip.
    if (results.status().code() == StatusCode::kUnsupported) {
      return std::string(kUnsupportedAtRun) + results.status().message();
    }
    return "run: " + results.status().ToString();
  }

  const std::vector<TensorInfo>& model_outputs = session.outputs();
  if (model_outputs.size() != output_files->size()) {
    return fmt::format("the loaded model has {} output(s) ({}), the data set expects {}",
                       model_outputs.size(), Names(model_outputs), output_files->size());
  }
  for (size_t i = 0; i < output_files->size(); ++i) {
    const std::string file = (*output_files)[i].filename().string();
    std::string name;
    StatusOr<Tensor> expected = ReadTensorProtoFile((*output_files)[i].string(), &name);
    if (!expected.ok()) return fmt::format("reading {}: {}", file, expected.status().ToString());
    if (name.empty()) name = model_outputs[i].name;
    auto it = results->find(name);
    if (it == results->end()) {
      return fmt::format("{} expects output '{}', which Run did not return (model outputs: {})",
                         file, name, Names(model_outputs));
    }
    *expected = AsBFloat16IfStoredAsUInt16(*expected, it->second.dtype());
    auto own = per_output.find(name);
    Tolerance tolerance = own != per_output.end() ? own->second : options.tolerance;
    // The generator narrows float to bfloat16 by truncating; ONNX Runtime and collage round to
    // nearest even: the two differ by up to one bfloat16 step (at most 2^-7 of the value).
    if (expected->dtype() == DType::kBFloat16) tolerance.rtol = std::max(tolerance.rtol, 1.0 / 128);
    // A quantized output, computed another way than the expected one, may round differently
    // (TensorInfo::quantization_tolerance).
    if (options.quantization_tolerance) {
      for (const TensorInfo& info : model_outputs) {
        if (info.name != name) continue;
        tolerance.rtol = std::max(tolerance.rtol, info.dynamic_quantization_tolerance);
        if (info.quantization_tolerance == 0) continue;
        if (IsFloating(expected->dtype())) {
          tolerance.atol += info.quantization_tolerance;
        } else {
          tolerance.int_steps =
              std::max(tolerance.int_steps, static_cast<int64_t>(info.quantization_tolerance));
        }
      }
    }
    CompareResult compared = CompareTensors(it->second, *expected, tolerance);
    if (!compared.ok) return fmt::format("output '{}': {}", name, compared.message);
  }
  return "";
}

CaseResult RunCaseUnguarded(const fs::path& case_dir, const CaseOptions& options) {
  SessionOptions session_options;
  session_options.num_threads = options.num_threads;
  session_options.backend = options.backend;
  const fs::path shapes_file = case_dir / "shapes.txt";
  if (fs::exists(shapes_file)) {
    Status s = ReadShapesFile(shapes_file, session_options.input_shapes);
    if (!s.ok()) return Fail(s.ToString());
  }

  std::map<std::string, Tolerance> per_output;
  const fs::path tolerance_file = case_dir / "tolerance.txt";
  if (fs::exists(tolerance_file)) {
    Status s = ReadToleranceFile(tolerance_file, per_output, options.tolerance);
    if (!s.ok()) return Fail(s.ToString());
  }

  StatusOr<std::vector<fs::path>> data_sets = NumberedEntries(case_dir, "test_data_set_", "");
  if (!data_sets.ok()) return Fail(data_sets.status().ToString());
  if (data_sets->empty()) return Fail("no test_data_set_0 folder");

  StatusOr<std::unique_ptr<Session>> session =
      Session::LoadFile((case_dir / "model.onnx").string(), session_options);
  if (!session.ok()) {
    if (session.status().code() == StatusCode::kUnsupported) {
      return {Outcome::kSkip, session.status().message()};
    }
    return Fail("load: " + session.status().ToString());
  }
  for (const fs::path& data_dir : *data_sets) {
    std::string error = RunDataSet(**session, data_dir, options, per_output);
    if (error.rfind(kUnsupportedAtRun, 0) == 0) {
      return {Outcome::kSkip, error.substr(std::string(kUnsupportedAtRun).size())};
    }
    if (!error.empty()) {
      if (data_sets->size() > 1) error = data_dir.filename().string() + ": " + error;
      return Fail(error);
    }
  }
  return {Outcome::kPass, ""};
}

}  // namespace

CaseResult RunCase(const fs::path& case_dir, const CaseOptions& options) {
  // Exceptions must not cross collage's API; if one does, that is a failure of this case, and
  // the runner goes on with the next.
  try {
    return RunCaseUnguarded(case_dir, options);
  } catch (const std::exception& e) {
    return Fail(fmt::format("exception escaped collage: {}", e.what()));
  } catch (...) {
    return Fail("non-standard exception escaped collage");
  }
}

}  // namespace collage::conformance
