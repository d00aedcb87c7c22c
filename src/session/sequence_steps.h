// The sequence ops (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceLength, SequenceErase, ConcatFromSequence, SplitToSequence) and an Identity of a
// sequence, as host steps of a staged graph: what TorchScript exports write for a Python list
// filled in a loop and concatenated after it.
#pragma once

#include <memory>

#include "session/staged_graph.h"

namespace collage {

StatusOr<std::unique_ptr<Step>> MakeSequenceStep(const onnx::NodeProto& node, int64_t opset);

}  // namespace collage
