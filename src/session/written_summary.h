// What a model is made of as its file writes it, before any import at some input shapes:
// the summary of a session that compiles per run until its first run (and always, for one
// that runs in stages: no one graph shows it whole).
#pragma once

#include "collage/model_summary.h"
#include "onnx/onnx_pb.h"

namespace collage {

// Nodes (bodies of control flow included) by op type, initializer elements as parameters,
// the default-domain opset; FLOPs unknown (flops_known false).
ModelSummary WrittenSummary(const onnx::ModelProto& model);

}  // namespace collage
