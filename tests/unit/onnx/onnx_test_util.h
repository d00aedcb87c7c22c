// Helpers for the frontend tests: build small ModelProtos with libonnx's protobuf classes and
// write them into a per-test temporary directory.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace collage::testing {

// A dim: a value, or a symbolic name ("batch").
using Dim = std::variant<int64_t, std::string>;

inline void SetTensorType(onnx::TypeProto* type, int32_t elem_type, const std::vector<Dim>& dims) {
  auto* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d)) {
      dim->set_dim_value(*v);
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13, int64_t ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("collage-test");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  ModelBuilder& Input(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
    auto* in = graph()->add_input();
    in->set_name(name);
    SetTensorType(in->mutable_type(), elem_type, dims);
    return *this;
  }
  ModelBuilder& Output(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
    auto* out = graph()->add_output();
    out->set_name(name);
    SetTensorType(out->mutable_type(), elem_type, dims);
    return *this;
  }
  // An output declared with its name only (no type).
  ModelBuilder& UntypedOutput(const std::string& name) {
    graph()->add_output()->set_name(name);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  ModelBuilder& FloatInit(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  ModelBuilder& Int64Init(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  ModelBuilder& Domain(const std::string& domain, int64_t version) {
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    return *this;
  }

  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

inline void AddIntAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
inline void AddIntsAttr(onnx::NodeProto& node, const std::string& name,
                        const std::vector<int64_t>& values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("collage_") + (info ? info->test_suite_name() : "t") + "_" +
                       (info ? info->name() : "x") + "_" + std::to_string(::getpid());
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

}  // namespace collage::testing
