// One conformance case: a folder in the layout of the ONNX backend tests,
//   model.onnx
//   test_data_set_K/input_N.pb, output_N.pb   (one TensorProto each; K, N = 0, 1, ...)
//   shapes.txt                                (optional: lines "name=1x3x224x224", '#' comments;
//                                              fixes dynamic input dims via SessionOptions)
//   tolerance.txt                             (optional: lines "OUTPUT atol=VALUE" or "OUTPUT
//                                              steps=N", '#' comments: VALUE added to that
//                                              output's absolute tolerance, N integer steps
//                                              allowed; one quantization step)
// loaded once with collage::Session and run on every data set.
#pragma once

#include <filesystem>
#include <string>

#include "tensor_compare.h"

namespace collage::conformance {

enum class Outcome { kPass, kFail, kSkip };

const char* OutcomeName(Outcome outcome);  // "PASS", "FAIL", "SKIP"

struct CaseOptions {
  Tolerance tolerance;
  int num_threads = 0;  // SessionOptions::num_threads
  // SessionOptions::backend: each node on this backend where it has a rule, else on native.
  std::string backend = "native";
  // Widen each quantized output's tolerance by the model's own bound on how far two correct
  // runs may round it apart (TensorInfo::quantization_tolerance): for int8 models whose
  // expected outputs another runtime computed.
  bool quantization_tolerance = false;
};

struct CaseResult {
  Outcome outcome = Outcome::kFail;
  // Why it failed or was skipped (the Status message for a skip); empty for a pass.
  std::string message;
};

// SKIP only when loading the model fails with StatusCode::kUnsupported; every other problem
// (a load error of another kind, unreadable test data, a run error, a wrong output) is FAIL.
CaseResult RunCase(const std::filesystem::path& case_dir, const CaseOptions& options);

}  // namespace collage::conformance
