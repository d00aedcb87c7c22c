// An index out of range is an error on every backend: graph inputs that are indices are
// checked on every run, and an engine that reads such an index as zeros (OpenVINO) is not
// given a gather whose indices the graph computes.
#include <gtest/gtest.h>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "ops/graph_builder.h"
#include "session/session_access.h"

namespace collage {
namespace {

// data [5, 3] (a constant) gathered along axis 0 by `indices` [2], given (or, with
// `computed`, the given ones through a Max the graph computes).
Graph GatherModel(bool computed) {
  GraphBuilder b("gather");
  ValueId indices = b.Input("indices", DType::kInt64, {2});
  if (computed) indices = b.Node("Max", {indices, b.Ints("floor", {-100})});
  ValueId data = b.RandomNormal("data", {5, 3}, 1.0f);
  b.Output(b.Node("Gather", {data, indices}, {{"axis", 0}}), "y");
  StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(*graph);
}

std::vector<std::string> Backends() {
  std::vector<std::string> names = {"native"};
  if (GlobalBackendRegistry().Find("openvino") != nullptr) names.push_back("openvino");
  if (GlobalBackendRegistry().Find("onnxruntime") != nullptr) names.push_back("onnxruntime");
  return names;
}

TEST(IndexBoundsTest, AnOutOfRangeIndexIsAnErrorOnEveryBackend) {
  for (bool computed : {false, true}) {
    for (const std::string& backend : Backends()) {
      SCOPED_TRACE(backend + (computed ? ", computed indices" : ", indices given"));
      SessionOptions options;
      options.backend = backend;
      auto session = SessionAccess::FromGraph(GatherModel(computed), options);
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      auto good = (*session)->Run({{"indices", Tensor::FromVector<int64_t>({2}, {4, -5})}});
      ASSERT_TRUE(good.ok()) << good.status().ToString();
      auto bad = (*session)->Run({{"indices", Tensor::FromVector<int64_t>({2}, {1, 7})}});
      ASSERT_FALSE(bad.ok()) << "index 7 of 5 rows gave an answer";
    }
  }
  // Given as an input, the index is refused before anything runs, naming it.
  auto session = SessionAccess::FromGraph(GatherModel(false));
  ASSERT_TRUE(session.ok());
  auto bad = (*session)->Run({{"indices", Tensor::FromVector<int64_t>({2}, {1, -6})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input 'indices' (the indices of Gather node"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("index -6"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace collage
