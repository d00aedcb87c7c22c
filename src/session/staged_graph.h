// A graph run in stages: segments of ordinary nodes, each compiled per input signature like
// any session of dynamic shapes (ShapeSpecializer) on the session's backend, and between them
// host steps that the runtime runs itself on this run's values (host_nodes.h says which):
// If, Loop and Scan, whose bodies are staged graphs of their own, and the ops whose output
// shapes come from data, on the reference kernels. A model's main graph and every body it
// holds are staged graphs; bodies read the values of the graphs around them by name.
//
// Nodes are staged as early as their inputs allow: a node reading only values known before a
// host step runs in the segment before it, so a model with one NonMaxSuppression after its
// backbone compiles in two segments, whatever the order of its nodes in the file.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collage/session.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace collage {

// What every graph of one staged model shares.
struct StagedContext {
  ParsedModel model;  // owns the protos every graph and step points into
  int64_t opset = 0;  // the model's default-domain opset
  SessionOptions options;  // how segments are compiled: backend, threads, cache size
};

// A value of a run: a tensor, or a sequence of tensors (what the sequence ops make, and what
// a Loop carries or an If gives of them). Sequences live between host steps only: segments
// read and write tensors.
struct RunValue {
  RunValue() = default;
  RunValue(Tensor t) : tensor(std::move(t)) {}  // NOLINT: a tensor is a run value
  static RunValue Sequence(std::vector<Tensor> items) {
    RunValue value;
    value.sequence = std::make_shared<const std::vector<Tensor>>(std::move(items));
    return value;
  }
  bool is_sequence() const { return sequence != nullptr; }

  Tensor tensor;
  std::shared_ptr<const std::vector<Tensor>> sequence;  // shared: sequences are not copied
  // The run's caller's input or a constant (or possibly one): a model output that is one is
  // copied before the caller gets it; values the run computed are handed over as they are.
  bool borrowed = false;
};

// The values a graph reads at run time: its own (inputs, what its steps computed) and, by
// name, those of the graphs around it.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr, size_t expected_values = 0) : parent_(parent) {
    values_.reserve(expected_values);
  }
  const RunValue* Find(const std::string& name) const;
  void Set(const std::string& name, RunValue value) { values_[name] = std::move(value); }

 private:
  const Scope* parent_;
  std::unordered_map<std::string, RunValue> values_;
};

// The constants a graph sees: its initializers and Constant nodes, and those of the graphs
// around it. Segments embed the ones they read (so their backends see constant weights and
// shapes fold); host steps read them as tensors, decoded once.
class ConstantTable {
 public:
  explicit ConstantTable(const ConstantTable* parent, std::string base_dir)
      : parent_(parent), base_dir_(std::move(base_dir)) {}
  void Add(const onnx::TensorProto& proto) { protos_[Name(proto)] = &proto; }
  // Takes a Constant node's value, under the name of its output.
  void AddValue(const std::string& name, Tensor value);
  const onnx::TensorProto* Find(const std::string& name) const;
  StatusOr<Tensor> Decoded(const std::string& name) const;

 private:
  static const std::string& Name(const onnx::TensorProto& proto);
  const ConstantTable* parent_;
  std::string base_dir_;
  std::unordered_map<std::string, const onnx::TensorProto*> protos_;
  std::deque<onnx::TensorProto> owned_;  // Constant nodes' values; a deque keeps addresses
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, Tensor> decoded_;
};

// Reads the tensor `name` at run time: from the scope, else a constant. Names the reader in
// errors (a sequence where a tensor is read among them).
StatusOr<Tensor> ReadValue(const Scope& scope, const ConstantTable& constants,
                           const std::string& name, const std::string& reader);
// Reads `name`, a tensor or a sequence.
StatusOr<RunValue> ReadRunValue(const Scope& scope, const ConstantTable& constants,
                                const std::string& name, const std::string& reader);

// One step of a staged graph: reads its inputs from the scope, writes its outputs there.
class Step {
 public:
  virtual ~Step() = default;
  virtual Status Run(Scope& scope, const ConstantTable& constants) const = 0;
  // How many compiled models the step keeps (segments, and the bodies of control flow).
  virtual int num_compiled() const = 0;
  // "segment 0 (12 nodes)", "Loop node 'loop_0'": for messages and DescribePlacement. Made
  // once: runs name the step in every value they read.
  virtual const std::string& Describe() const = 0;
};

class StagedGraph {
 public:
  // `graph` and `outer` must outlive the result (they live in `context`'s model, and in the
  // graph holding this one). `outer_foldable(name)`: whether a value from
  // outside the graph (an input, an outer value) counts as known when a segment compiles.
  // `depth`: how many bodies hold this graph.
  static StatusOr<std::unique_ptr<StagedGraph>> Build(
      const onnx::GraphProto& graph, std::shared_ptr<const StagedContext> context,
      const ConstantTable* outer, const std::function<bool(const std::string&)>& outer_foldable,
      int depth);

  // Runs the graph with its inputs (in the order the graph declares them, initializers
  // listed as inputs left out) in a scope whose
  // parent is `outer`; returns its outputs in the order it declares them.
  StatusOr<std::vector<RunValue>> Run(const Scope& outer, const std::vector<RunValue>& inputs) const;

  const onnx::GraphProto& proto() const { return *graph_; }
  int num_compiled() const;
  // One line per step, indented by `indent`.
  std::string Describe(const std::string& indent) const;
  int num_host_steps() const;

 private:
  StagedGraph(const onnx::GraphProto& graph, const ConstantTable* outer,
              const std::string& base_dir)
      : graph_(&graph), constants_(outer, base_dir) {}

  const onnx::GraphProto* graph_;
  std::vector<std::string> formal_inputs_;  // the graph's inputs that are no initializers
  size_t num_values_ = 0;                   // inputs and node outputs: a run's scope size
  ConstantTable constants_;
  std::vector<std::unique_ptr<Step>> steps_;
};

// Names `node` reads: its inputs, and the values its subgraphs read from outside themselves
// (at any depth). Empty names (absent optional inputs) are left out.
std::vector<std::string> NamesRead(const onnx::NodeProto& node);

// How messages name a node of a model: by its name, else its op and position.
std::string NodeLabel(const onnx::NodeProto& node);

}  // namespace collage
