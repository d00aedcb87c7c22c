// If, Loop and Scan as steps of a staged graph (staged_graph.h): each holds its bodies as
// staged graphs and runs them on this run's values, as the ONNX spec defines the op.
#pragma once

#include <memory>

#include "session/staged_graph.h"

namespace collage {

// `constants`: the table of the graph holding `node`, which its bodies see as outer
// constants. `depth`: how many bodies hold that graph.
StatusOr<std::unique_ptr<Step>> MakeControlFlowStep(const onnx::NodeProto& node,
                                                    std::shared_ptr<const StagedContext> context,
                                                    const ConstantTable& constants, int depth);

}  // namespace collage
