// Session: the public C++ API. Load an ONNX model, inspect its inputs and outputs, run it
// with named tensors. Run may be called from several threads at once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/model_summary.h"
#include "collage/native_backend.h"
#include "collage/optimize.h"
#include "collage/placement_source.h"
#include "collage/run_profile.h"
#include "collage/shape_range.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

class Graph;
class PerRunModel;   // a model compiled while it runs (src/session/per_run_model.h)

struct SessionOptions {
  // Fixes the dynamic dims of graph inputs (every dynamic dim must be fixed): name → the
  // whole shape. A shape that contradicts a static dim of the model is refused.
  std::map<std::string, Shape> input_shapes;
  // Where an input_shapes entry came from, as errors should name it (for example
  // "--input x=x.npy"); an entry without one is named "--shape NAME=DIMS".
  std::map<std::string, std::string> input_shape_origins;
  // Threads used by the kernels of every backend; 0 = the thread count a plan (plan_path)
  // was measured with, else one per core.
  int num_threads = 0;
  // Runs every node on this backend where one of its rules matches, and on "native"
  // elsewhere (`collage backends` lists them).
  std::string backend = kNativeBackend;
  // Runs the placement saved in this plan file (`collage optimize --save-plan`) instead. A
  // file of plans at several input shapes (SavePlans) gives the one for the input shapes (each
  // run's, in a session that compiles per run), else the nearest shapes' where it applies.
  std::string plan_path;
  // The NaN/Inf contract (docs/backends.md): NaN propagates and infinities follow IEEE
  // arithmetic, as the ONNX spec and the reference kernels compute them. By default groups
  // are placed for speed and may differ from it on NaN/Inf inputs (finite inputs always match
  // the reference within tolerance). When true, only rules declaring that they meet it
  // (Rule::PropagatesNonFinite) are used, every other node runs on native; Optimize then
  // searches only among those, and a plan using another rule is refused. Slower: fewer fused
  // kernels.
  bool strict_non_finite = false;
  // A model whose input dims are dynamic (and not fixed by input_shapes), or whose shapes
  // depend on the values of small inputs (a Reshape's target shape, a TopK's k given as an
  // input), is loaded for any input shapes: each Run at a new input signature (the input
  // shapes, and the values of those small inputs) imports and compiles the model for it once;
  // the last shape_cache_size compiled models are kept. Such a session cannot be optimized
  // or given a plan (both measure one graph: fix the shapes with input_shapes). When false,
  // such a model is refused at load, naming what to fix.
  // A model with control flow decided by its data (If on a computed condition, Loop, Scan) or
  // with shapes set by values it computes (a NonZero of a feature map) runs in segments
  // compiled per run whatever this says: no input shape decides those.
  bool shapes_per_run = true;
  int shape_cache_size = 8;
  // A Loop (of such a model) that has run this many iterations without stopping ends the run
  // with an error naming it: a hostile or broken model cannot hold a run for ever.
  int64_t max_loop_iterations = int64_t{1} << 20;
};

// What the search that made the current placement estimated it would cost: each group's
// measured cost alone, in execution order, and the whole plan's sum with its conversions
// (0 where nothing was estimated: a single-backend placement, a region measured only in
// whole plans). `collage bench --plan --profile` shows it beside the time measured in a run.
struct PlacementEstimate {
  double total_ms = 0;
  std::vector<double> group_ms;
};

// How long loading took: reading and importing the ONNX file (parsing, checks, shape
// inference, constant folding), then making the placement runnable (simplifying the graph,
// placing or reading the plan, compiling every group on its backend).
struct LoadTimes {
  double import_ms = 0;   // 0 for a session made from a graph
  double compile_ms = 0;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  // Outputs of a quantized model: one quantization step, in the output's own units (1 for a
  // quantized integer, the scale for a dequantized float), where the model rounds it there;
  // 0 otherwise. Two correct runs of the model may differ by up to quantization_tolerance:
  // each layer rounds on its own and the differences carry (about the square root of the
  // number of roundings on the way, in steps), which `collage run --check` allows.
  double quantization_step = 0;
  double quantization_tolerance = 0;
  // Outputs computed from activations quantized at run time (DynamicQuantizeLinear): how far
  // two correct runs may differ, relative to the output's magnitude (max |a - b| / max |ref|),
  // since a float difference can move such a rounding by a data-dependent step; 0 otherwise.
  double dynamic_quantization_tolerance = 0;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> LoadFile(const std::string& path,
                                                     const SessionOptions& options = {});
  static StatusOr<std::unique_ptr<Session>> LoadBytes(const std::string& onnx_bytes,
                                                      const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const;
  // The thread count the current placement runs with (resolved: never 0).
  int num_threads() const;
  const LoadTimes& load_times() const;
  const std::vector<TensorInfo>& outputs() const;
  // What the model is made of as it runs (after constant folding and simplification): op
  // counts, parameters, FLOPs.
  ModelSummary summary() const;
  // What the model file says of itself (producer, version, descriptions, metadata_props);
  // empty for a session made from a graph.
  const ModelMetadata& metadata() const;
  // How the nodes are grouped and which backend runs each group, with the layout
  // conversions between them.
  std::string DescribePlacement() const;
  int num_layout_conversions() const;

  // Measures every backend's candidates on this machine (the cost database first), finds the
  // cheapest placement by the op-level search and compiles it; the session then runs it.
  // Not to be called while another Optimize or LoadPlan runs; Run calls may go on meanwhile
  // (they finish on the previous placement).
  Status Optimize(const OptimizeOptions& options, OptimizeReport* report = nullptr);
  // Runs the placement saved in a plan file from now on (warnings() says what differs).
  Status LoadPlan(const std::string& path);
  // Saves the current placement as a plan (JSON): groups, backends, costs, model hash.
  Status SavePlan(const std::string& path) const;
  // Saves the placements of sessions of one model, each loaded at other input shapes, as one
  // plan file. A session given it (plan_path) runs the plan made for its input shapes, else
  // the one of the nearest shapes — preferring plans declared for its shapes — each group
  // where its rule still offers it at these shapes and on native where not (warnings() says
  // so). `declared`, when given, has one entry per session: the shape ranges its plan is
  // declared for (a shape profile; each range must hold the session's shape of that input).
  static constexpr int kMaxPlansPerFile = 64;
  static Status SavePlans(const std::vector<const Session*>& sessions, const std::string& path,
                          const std::vector<InputShapeRanges>& declared = {});
  // The end-to-end latency measured for the current placement, saved with the plan.
  void RecordMeasuredLatency(double milliseconds);
  // What produced the current placement: one backend alone, a search, or what a loaded plan
  // records (PlacementSourceName spells it).
  PlacementSource placement_source() const;
  PlacementEstimate placement_estimate() const;
  // The accuracy budget the current placement was made under (OptimizeOptions::tolerance,
  // recorded in its plan) when some group may compute in a reduced precision; 0 for a
  // float32 placement. `collage run --check` holds the outputs to it.
  double placement_tolerance() const;
  // Warnings from loading a plan (another device, other library versions) or optimizing
  // (a corrupt cost database moved aside); in a session that compiles per run, also those of
  // each input signature's compile (its plan measured at other shapes, groups that fell back),
  // each once, naming the input shapes.
  std::vector<std::string> warnings() const;

  // Whether the session compiles per input signature (SessionOptions::shapes_per_run applied):
  // inputs() and outputs() then show dynamic dims as -1, and summary(), DescribePlacement()
  // and the placement describe the model as compiled for the latest run.
  bool compiles_per_run() const;
  // How many input signatures have a compiled model kept (0 for a session of fixed shapes).
  int num_compiled_shapes() const;

  // Every input must be given with its declared dtype, and its declared shape (any size for a
  // dynamic dim of a session that compiles per run). Returns every graph output by name
  // (owned tensors).
  // With `profile`, also records the time of every node (adds a clock read per node).
  StatusOr<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                              RunProfile* profile = nullptr);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  StatusOr<std::map<std::string, Tensor>> RunUnguarded(const std::map<std::string, Tensor>& inputs,
                                                       RunProfile* profile);
  // Inputs checked, in the order of inputs(); outputs in the order of outputs().
  StatusOr<std::vector<Tensor>> RunOrderedChecked(const std::vector<Tensor>& ordered,
                                                  RunProfile* profile);
  // Takes an already imported graph: the library's own way in (SessionAccess::FromGraph);
  // applications use LoadFile, LoadBytes or LoadZooModel (collage/zoo.h).
  static StatusOr<std::unique_ptr<Session>> FromGraph(Graph graph, const SessionOptions& options);
  // A session that compiles while it runs: per input signature (SessionOptions::
  // shapes_per_run), or in stages where control flow or data-set shapes need it
  // (src/session/per_run_model.h).
  static StatusOr<std::unique_ptr<Session>> PerRun(std::unique_ptr<PerRunModel> model,
                                                   const SessionOptions& options,
                                                   double import_ms);
  std::unique_ptr<Impl> impl_;
  friend struct SessionAccess;  // the library's own view of the model (src/session)
};

}  // namespace collage
