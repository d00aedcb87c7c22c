// The application API's own entry points beside Session (collage/zoo.h,
// collage/available_backends.h, Session::summary): what they return agrees with the library
// they wrap, and bad names are refused with the name and the alternatives.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "collage/available_backends.h"
#include "collage/random_tensor.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "collage/zoo.h"

namespace collage {
namespace {

TEST(ApplicationApiTest, ZooListNamesEveryModelWithADescription) {
  const std::vector<ZooModelInfo> models = ListZooModels();
  bool has_resnet50 = false, has_dcgan = false;
  for (const ZooModelInfo& model : models) {
    EXPECT_FALSE(model.description.empty()) << model.name;
    has_resnet50 = has_resnet50 || model.name == "resnet50";
    has_dcgan = has_dcgan || model.name == "dcgan";
  }
  EXPECT_TRUE(has_resnet50);
  EXPECT_TRUE(has_dcgan);
}

TEST(ApplicationApiTest, AnUnknownZooModelIsRefusedWithTheKnownNames) {
  auto onnx = ExportZooModel("no_such_model");
  ASSERT_FALSE(onnx.ok());
  EXPECT_EQ(onnx.status().code(), StatusCode::kNotFound);
  EXPECT_NE(onnx.status().message().find("no_such_model"), std::string::npos);
  EXPECT_NE(onnx.status().message().find("resnet50"), std::string::npos);
  EXPECT_FALSE(LoadZooModel("no_such_model").ok());
}

// DCGAN's generator (PyTorch's example, BatchNorm folded): five ConvTranspose, four Relu and
// a Tanh; its weights are the folded kernels and biases.
TEST(ApplicationApiTest, ZooExportSummarizesTheModelAsTheSessionDoes) {
  ModelSummary exported;
  auto onnx = ExportZooModel("dcgan", &exported);
  ASSERT_TRUE(onnx.ok()) << onnx.status().ToString();
  EXPECT_EQ(exported.num_nodes, 10);
  const std::map<std::string, int> ops = {{"ConvTranspose", 5}, {"Relu", 4}, {"Tanh", 1}};
  EXPECT_EQ(exported.op_counts, ops);
  EXPECT_EQ(exported.num_parameters, 3575744);
  EXPECT_GT(exported.flops, 2e8);

  auto session = Session::LoadBytes(*onnx);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const ModelSummary loaded = (*session)->summary();
  EXPECT_EQ(loaded.opset, exported.opset);
  EXPECT_EQ(loaded.num_nodes, exported.num_nodes);
  EXPECT_EQ(loaded.op_counts, exported.op_counts);
  EXPECT_EQ(loaded.num_parameters, exported.num_parameters);
  EXPECT_DOUBLE_EQ(loaded.flops, exported.flops);
}

TEST(ApplicationApiTest, TheZooModelInMemoryRunsAsItsOnnxBytes) {
  auto onnx = ExportZooModel("dcgan");
  ASSERT_TRUE(onnx.ok()) << onnx.status().ToString();
  auto from_bytes = Session::LoadBytes(*onnx);
  auto in_memory = LoadZooModel("dcgan");
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
  std::mt19937 rng(3);
  std::map<std::string, Tensor> inputs;
  for (const TensorInfo& info : (*from_bytes)->inputs()) {
    inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
  }
  auto a = (*from_bytes)->Run(inputs);
  auto b = (*in_memory)->Run(inputs);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->size(), b->size());
  for (const auto& [name, tensor] : *a) {
    EXPECT_EQ(tensor.ToVector<float>(), b->at(name).ToVector<float>()) << name;
  }
}

TEST(ApplicationApiTest, AvailableBackendsAreTheRegistrysWithTheirRules) {
  const std::vector<BackendInfo> listed = AvailableBackends();
  const std::vector<const Backend*> registered = GlobalBackendRegistry().backends();
  ASSERT_EQ(listed.size(), registered.size());
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(listed.front().name, "native");
  for (size_t i = 0; i < listed.size(); ++i) {
    const Backend& backend = *registered[i];
    EXPECT_EQ(listed[i].name, backend.name());
    EXPECT_EQ(listed[i].version, backend.version());
    EXPECT_EQ(listed[i].device, backend.device());
    EXPECT_EQ(listed[i].graph_level, backend.graph_level());
    ASSERT_EQ(listed[i].rules.size(), backend.rules().size()) << backend.name();
    for (size_t r = 0; r < backend.rules().rules().size(); ++r) {
      const Rule& rule = backend.rules().rules()[r];
      EXPECT_EQ(listed[i].rules[r].name, rule.name());
      EXPECT_EQ(listed[i].rules[r].description, rule.Describe());
      EXPECT_EQ(listed[i].rules[r].meets_non_finite_contract, rule.meets_non_finite_contract());
    }
  }
}

TEST(ApplicationApiTest, AMissingPluginIsRefusedNamingIt) {
  const Status file = LoadBackendPlugin("/nonexistent/libnothing.so");
  EXPECT_FALSE(file.ok());
  EXPECT_NE(file.message().find("/nonexistent/libnothing.so"), std::string::npos) << file.message();
  const Status dir = LoadBackendPlugins("/nonexistent/plugins");
  EXPECT_FALSE(dir.ok());
  EXPECT_NE(dir.message().find("/nonexistent/plugins"), std::string::npos) << dir.message();
}

}  // namespace
}  // namespace collage
