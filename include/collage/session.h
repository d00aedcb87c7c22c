// Session: the public C++ API. Load an ONNX model, inspect its inputs and outputs, run it
// with named tensors. Run may be called from several threads at once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

class Graph;

struct SessionOptions {
  // Fixes dims of graph inputs (dynamic ones must be fixed): name → shape.
  std::map<std::string, Shape> input_shapes;
  // Threads used by the kernels; 0 = one per core.
  int num_threads = 0;
};

// Time spent in each node of one run, in execution order (filled by Run when requested).
struct NodeTiming {
  std::string node_name;
  std::string op_type;
  double milliseconds = 0;
};
struct RunProfile {
  std::vector<NodeTiming> nodes;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> LoadFile(const std::string& path,
                                                     const SessionOptions& options = {});
  static StatusOr<std::unique_ptr<Session>> LoadBytes(const std::string& onnx_bytes,
                                                      const SessionOptions& options = {});
  // Takes an already imported graph (the zoo and tests use this).
  static StatusOr<std::unique_ptr<Session>> FromGraph(Graph graph,
                                                      const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const Graph& graph() const;

  // Every input must be given with exactly its declared dtype and shape. Returns every graph
  // output by name (owned tensors).
  // With `profile`, also records the time of every node (adds a clock read per node).
  StatusOr<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                              RunProfile* profile = nullptr);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  StatusOr<std::map<std::string, Tensor>> RunUnguarded(const std::map<std::string, Tensor>& inputs,
                                                       RunProfile* profile);
  std::unique_ptr<Impl> impl_;
};

}  // namespace collage
