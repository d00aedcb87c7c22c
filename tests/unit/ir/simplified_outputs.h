// What the simplification tests share: simplify a copy of a built graph and check that its
// outputs, by name, are the original's (reference kernels, before and after).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../zoo/zoo_test_util.h"
#include "collage/normalized_error.h"
#include "ir/simplify.h"

namespace collage::simplify_test {

inline int Count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op;
  return n;
}

// Simplifies a copy of `built` into `simplified` and checks its outputs against the
// original's within `tolerance` (normalized error).
inline SimplifyStats SimplifyAndCompare(const Graph& built, Graph& simplified,
                                        double tolerance = 1e-5) {
  simplified = built;
  auto stats = SimplifyGraph(simplified);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(simplified.Validate().ok()) << simplified.Validate().ToString();
  const auto inputs = zoo_test::RandomGraphInputs(built, 3);
  auto before = zoo_test::RunWithReferenceKernels(built, inputs);
  auto after = zoo_test::RunWithReferenceKernels(simplified, inputs);
  EXPECT_TRUE(before.ok() && after.ok());
  if (before.ok() && after.ok()) {
    EXPECT_EQ(before->size(), after->size());
    for (const auto& [name, expected] : *before) {
      EXPECT_TRUE(after->count(name)) << "output " << name << " lost its name";
      if (after->count(name)) {
        EXPECT_LE(NormalizedError(after->at(name), expected), tolerance) << name;
      }
    }
  }
  return stats.ok() ? *stats : SimplifyStats{};
}

}  // namespace collage::simplify_test
