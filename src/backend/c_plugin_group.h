// What a C plug-in's functions receive as a CollageGroup (collage/plugin_c_api.h): one match
// of a rule's pattern, with the kernel inputs and outputs of the group it covers.
#pragma once

#include <vector>

#include "collage/plugin_c_api.h"
#include "collage/sdk/kernel.h"
#include "collage/sdk/pattern.h"

struct CollageGroup {
  const collage::Graph* graph = nullptr;
  const collage::Match* match = nullptr;
  std::vector<collage::ValueId> inputs;   // computed values the group reads: run()'s inputs
  std::vector<collage::ValueId> outputs;  // values it writes for others: run()'s outputs
  int32_t num_threads = 0;                // 0 while a rule's accepts function decides
};

namespace collage {

// The group `request` compiles, whose nodes `match` matched.
CollageGroup GroupOf(const Match& match, const CompileRequest& request);
// The group a match covers, before anything compiles it (num_threads 0).
CollageGroup GroupOf(const Match& match);

}  // namespace collage
