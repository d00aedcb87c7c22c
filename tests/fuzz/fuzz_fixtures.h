// What the fuzz targets and their seed writer (fuzz_seeds.cc) must agree on, so that the
// committed seeds reach past the first checks.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cost/cost_database.h"
#include "ops/graph_builder.h"

namespace collage::fuzz {

// plan_fuzzer checks plans against this model: five nodes with a diamond (Add feeds both
// Sigmoid and Mul), so that groups can overlap, leave a node out, or be non-convex ({add,
// mul} without sigmoid). Node ids: 0 conv, 1 relu, 2 add, 3 sigmoid, 4 mul. Changing it
// changes the model hash the seed plans carry: the fuzzer also checks each plan with the
// hash made to match, so stale seeds still reach the group checks, but rewrite them.
inline Graph PlanFuzzGraph() {
  GraphBuilder b("plan_fuzz", 17, /*seed=*/0);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId w = b.RandomNormal("w", {4, 4, 3, 3}, 0.2f);
  ValueId c = b.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "conv");
  ValueId r = b.Node("Relu", {c}, {}, "relu");
  ValueId a = b.Node("Add", {r, x}, {}, "add");
  ValueId s = b.Node("Sigmoid", {a}, {}, "sigmoid");
  ValueId m = b.Node("Mul", {a, s}, {}, "mul");
  b.Output(m, "y");
  auto graph = std::move(b).Build();
  if (!graph.ok()) {
    std::fprintf(stderr, "plan fuzz graph: %s\n", graph.status().ToString().c_str());
    std::abort();
  }
  return std::move(*graph);
}

// The keys of the rows in the seed cost databases (signatures "conv", "relu", "measuring");
// cost_database_fuzzer looks each of them up.
inline CostKey SeedCostKey(const std::string& signature) {
  return CostKey{"fuzz-device", "native", "1", signature, 1, "warm"};
}

// tensor_proto_fuzzer's scratch folder holds this file for seeds with external data to
// point at: 256 bytes, byte i is i.
constexpr const char* kWeightsFile = "weights.bin";
inline std::string WeightsBytes() {
  std::string bytes(256, '\0');
  for (int i = 0; i < 256; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(i);
  return bytes;
}

}  // namespace collage::fuzz
