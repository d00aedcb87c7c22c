#include "onnx/onnx_import.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "onnx/constant_folding.h"
#include "onnx/function_expansion.h"
#include "onnx/onnx_attributes.h"
#include "onnx/onnx_checks.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "onnx/tensor_proto.h"
#include "util/file_io.h"

namespace collage {

namespace {

// Opsets whose ops collage implements (the target is 11..21; older ones work op by op).
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 21;
// Function bodies and If branches may hold more of them; deeper than this is a function
// calling itself (or a file built to exhaust the stack).
constexpr int kMaxNestingDepth = 32;
// Nodes that function bodies may add in all: a body calling another twice, 32 levels deep,
// would otherwise ask for 2^32 nodes.
constexpr int64_t kMaxExpandedNodes = int64_t{1} << 20;

std::string NormalizeDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

std::string OpDisplayName(const std::string& domain, const std::string& op_type) {
  return domain.empty() ? op_type : domain + "::" + op_type;
}

const char* NonTensorKind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    case onnx::TypeProto::kOpaqueType: return "an opaque value";
    default: return "not a tensor";
  }
}

// "Add (node 'add_1'), TopK (node 'topk')" from op → example node.
std::string OpsWithNodes(const std::map<std::string, std::string>& ops) {
  std::string text;
  for (const auto& [op, node] : ops) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} (node '{}')", op, node);
  }
  return text;
}

// Builds the Graph from a parsed model. Messages do not name the source; the caller adds it.
class Importer {
 public:
  Importer(const onnx::ModelProto& model, const ImportOptions& options, std::string base_dir)
      : model_(model),
        graph_proto_(model.graph()),
        options_(options),
        base_dir_(std::move(base_dir)) {}

  StatusOr<Graph> Run() {
    COLLAGE_RETURN_IF_ERROR(CheckModelStructure());
    if (!graph_proto_.name().empty()) graph_.set_name(graph_proto_.name());
    COLLAGE_RETURN_IF_ERROR(RefuseSparseTensors(model_));
    if (options_.run_onnx_checker && OnnxCheckerKnows(model_opset_)) {
      COLLAGE_RETURN_IF_ERROR(RunOnnxChecker(model_, base_dir_));
    }
    NameNodes();
    COLLAGE_RETURN_IF_ERROR(CheckDomains());
    COLLAGE_RETURN_IF_ERROR(ResolveLegacyOpset());
    graph_.set_opset(opset_);
    functions_.emplace(model_, opset_);
    COLLAGE_RETURN_IF_ERROR(CheckSupportedOps());
    COLLAGE_RETURN_IF_ERROR(AddInputs());
    COLLAGE_RETURN_IF_ERROR(AddInitializers());
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      COLLAGE_RETURN_IF_ERROR(
          AddNode(graph_proto_.node(i), node_names_[static_cast<size_t>(i)], 0));
    }
    COLLAGE_RETURN_IF_ERROR(AddOutputs());
    // Only now: libonnx 1.12's inference functions crash on some malformed attributes (a
    // zero stride divides by zero) that collage's own inference has refused by this point.
    if (OnnxCheckerKnows(model_opset_)) COLLAGE_RETURN_IF_ERROR(CrossCheckWithOnnxInference());
    graph_.RemoveDeadCode();
    COLLAGE_RETURN_IF_ERROR(graph_.Validate());
    return std::move(graph_);
  }

 private:
  // What libonnx's checker would refuse first, checked here for every model because the
  // checker does not run on opsets above 17. Also reads the default-domain opset.
  Status CheckModelStructure() {
    if (!model_.has_graph()) return InvalidModel("not a valid ONNX model (it has no graph)");
    if (model_.ir_version() <= 0) {
      return InvalidModel("not a valid ONNX model (it has no ir_version)");
    }
    // Unset until an import names the default domain: any number a file holds (-1
    // included) is that file's opset, never taken for "none".
    std::optional<int64_t> imported;
    for (const auto& import : model_.opset_import()) {
      const std::string domain = NormalizeDomain(import.domain());
      if (domain.empty()) {
        if (imported.has_value() && *imported != import.version()) {
          return InvalidModel("the model imports the default ONNX domain twice (opsets {} and {})",
                              *imported, import.version());
        }
        imported = import.version();
      }
      imported_domains_.insert(domain);
    }
    if (!imported.has_value() && model_.opset_import_size() == 0 && model_.ir_version() < 3) {
      imported = 1;  // IR version 1 and 2 models have no opset_import and mean opset 1
      imported_domains_.insert("");
    }
    // Only other domains: fine as long as no node needs the default one (CheckDomains). The
    // graph still needs an opset for export; the newest is as good as any.
    const int64_t opset = imported.value_or(kMaxOpset);
    if (opset < 1 || opset > kMaxOpset) {
      return Unsupported("opset {} is not supported (collage supports opsets {} to {})", opset,
                         kMinOpset, kMaxOpset);
    }
    model_opset_ = opset;
    opset_ = opset;
    if (graph_proto_.output_size() == 0) return InvalidModel("the graph has no outputs");
    return Status::Ok();
  }

  // Every node gets a unique name so errors and plans can name it: unnamed nodes become
  // "<op>_<index>", repeated names get the index appended.
  void NameNodes() {
    std::unordered_set<std::string> used;
    for (const auto& node : graph_proto_.node()) {
      if (!node.name().empty()) used.insert(node.name());
    }
    std::unordered_set<std::string> taken;
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const auto& node = graph_proto_.node(i);
      std::string name = node.name();
      if (name.empty() || taken.count(name)) {
        const std::string base =
            (name.empty() ? (node.op_type().empty() ? std::string("node") : node.op_type())
                          : name) +
            "_" + std::to_string(i);
        name = base;
        for (int k = 1; used.count(name) || taken.count(name); ++k) {
          name = base + "_" + std::to_string(k);
        }
      }
      taken.insert(name);
      node_names_.push_back(std::move(name));
    }
  }

  Status CheckDomains() const {
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const auto& node = graph_proto_.node(i);
      const std::string domain = NormalizeDomain(node.domain());
      if (!imported_domains_.count(domain)) {
        return InvalidModel(
            "{} node '{}' uses domain '{}', which the model does not import "
            "(opset_import)",
            node.op_type(), node_names_[static_cast<size_t>(i)], node.domain());
      }
    }
    return Status::Ok();
  }

  // Opsets below kMinOpset are accepted op by op: when every default-domain op of the model is
  // defined the same at kMinOpset (libonnx's schemas tell), the model means what it would at
  // kMinOpset, and the ops run with those semantics. Ops that changed since are listed.
  Status ResolveLegacyOpset() {
    if (opset_ >= kMinOpset) return Status::Ok();
    std::map<std::string, std::string> changed;  // op → first node
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const auto& node = graph_proto_.node(i);
      if (!NormalizeDomain(node.domain()).empty()) continue;
      if (!OnnxOpUnchanged(node.op_type(), opset_, kMinOpset)) {
        changed.emplace(node.op_type(), node_names_[static_cast<size_t>(i)]);
      }
    }
    if (!changed.empty()) {
      return Unsupported(
          "opset {} is not supported (collage supports opsets {} to {}); older "
          "models are accepted when their ops did not change until opset {}, "
          "but these did: {}",
          opset_, kMinOpset, kMaxOpset, kMinOpset, OpsWithNodes(changed));
    }
    opset_ = kMinOpset;
    return Status::Ok();
  }

  // One error listing every op type collage cannot run, each with one example node.
  Status CheckSupportedOps() const {
    std::map<std::string, std::string> unsupported;  // display name → first node
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const auto& node = graph_proto_.node(i);
      const std::string domain = NormalizeDomain(node.domain());
      // The frontend's own: Constant, and If whose condition is known at load (AddIf).
      if (domain.empty() && (node.op_type() == "Constant" || node.op_type() == "If")) continue;
      if (OpRegistry::Global().Find(domain, node.op_type()) != nullptr) continue;
      if (functions_->HasBody(node)) continue;  // its body's ops are checked as it expands
      unsupported.emplace(OpDisplayName(domain, node.op_type()),
                          node_names_[static_cast<size_t>(i)]);
    }
    if (unsupported.empty()) return Status::Ok();
    return Unsupported("{} unsupported op type{}: {}", unsupported.size(),
                       unsupported.size() == 1 ? "" : "s", OpsWithNodes(unsupported));
  }

  Status AddInputs() {
    std::unordered_set<std::string> initializers;
    for (const auto& init : graph_proto_.initializer()) initializers.insert(init.name());
    // Old exporters list weights as inputs too; those are constants, not inputs.
    std::vector<const onnx::ValueInfoProto*> inputs;
    std::vector<std::string> input_names;
    for (const auto& input : graph_proto_.input()) {
      if (initializers.count(input.name())) continue;
      inputs.push_back(&input);
      input_names.push_back(input.name());
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      if (std::find(input_names.begin(), input_names.end(), name) != input_names.end()) continue;
      const std::string what =
          initializers.count(name) ? "a weight (initializer), not an input" : "not a graph input";
      auto origin = options_.input_shape_origins.find(name);
      return InvalidArgument("{} names '{}', which is {} (inputs: {})",
                             origin == options_.input_shape_origins.end() ? "--shape" : origin->second,
                             name, what,
                             input_names.empty() ? std::string("none")
                                                 : fmt::format("{}", fmt::join(input_names, ", ")));
    }
    for (const auto& [name, value] : options_.input_values) {
      if (std::find(input_names.begin(), input_names.end(), name) == input_names.end()) {
        return InvalidArgument("a value is bound to '{}', which is not a graph input", name);
      }
    }
    std::vector<std::string> dynamic;  // every input still dynamic, reported together
    for (const onnx::ValueInfoProto* input : inputs) {
      const std::string& name = input->name();
      if (name.empty()) return InvalidModel("a graph input has no name");
      if (ids_.count(name)) return InvalidModel("graph input '{}' is listed twice", name);
      const onnx::TypeProto& type = input->type();
      if (!type.has_tensor_type()) {
        return Unsupported("input '{}' is {}; only tensor inputs are supported", name,
                           NonTensorKind(type));
      }
      auto dtype = DTypeFromOnnx(type.tensor_type().elem_type());
      if (!dtype.ok()) return dtype.status().WithContext("input '" + name + "'");
      const bool has_shape = type.tensor_type().has_shape();
      const onnx::TensorShapeProto& declared = type.tensor_type().shape();
      Shape shape;
      bool is_dynamic = !has_shape;
      if (has_shape) {
        for (const auto& dim : declared.dim()) {
          const bool known = dim.has_dim_value() && dim.dim_value() >= 0;
          shape.push_back(known ? dim.dim_value() : 1);  // 1: the suggestion in the message
          is_dynamic |= !known;
        }
      }
      auto override_it = options_.input_shapes.find(name);
      if (override_it != options_.input_shapes.end()) {
        const Shape& given = override_it->second;
        if (has_shape) COLLAGE_RETURN_IF_ERROR(CheckFixedShape(name, given, declared));
        shape = given;
      } else if (is_dynamic) {
        if (!has_shape) {
          dynamic.push_back(fmt::format(
              "input '{}' has no shape; give its data with --input {}=FILE or fix it with --shape "
              "{}=DIMS",
              name, name, name));
        } else {
          dynamic.push_back(fmt::format(
              "input '{}' has dynamic dims ({}); give its data with --input {}=FILE (its shape "
              "fixes them) or fix them with --shape {}={}",
              name, OnnxShapeToString(declared), name, name, DimsTemplate(declared)));
        }
        if (options_.needs != nullptr) options_.needs->dynamic_inputs.push_back(name);
        continue;
      }
      const std::optional<int64_t> elements = CheckedNumElements(shape);
      if (!elements) {
        return InvalidModel("input '{}' has invalid dims {}", name, ShapeToString(shape));
      }
      if (auto bound = options_.input_values.find(name); bound != options_.input_values.end()) {
        if (bound->second.dtype() != *dtype || bound->second.shape() != shape) {
          return InvalidArgument("the value bound to input '{}' is {} {}, the input is {} {}", name,
                                 DTypeName(bound->second.dtype()),
                                 ShapeToString(bound->second.shape()), DTypeName(*dtype),
                                 ShapeToString(shape));
        }
        ids_[name] = graph_.AddConstant(name, bound->second);
        continue;
      }
      ValueId id = graph_.AddValue(name, TensorType{*dtype, shape});
      graph_.AddInput(id);
      ids_[name] = id;
      // Few enough elements to bind per run, should a shape depend on the values.
      if (*elements <= kMaxBindableElements && bindable_inputs_.size() < 64) {
        value_sources_[id] = uint64_t{1} << bindable_inputs_.size();
        bindable_inputs_.push_back(name);
      }
    }
    if (!dynamic.empty()) return InvalidArgument("{}", fmt::join(dynamic, "; "));
    return Status::Ok();
  }

  // How errors name where a fixed shape came from.
  std::string ShapeOrigin(const std::string& name, const Shape& given) const {
    auto it = options_.input_shape_origins.find(name);
    if (it != options_.input_shape_origins.end()) {
      return fmt::format("{} (shape {})", it->second, ShapeToString(given));
    }
    return fmt::format("--shape {}={}", name, ShapeToString(given));
  }

  // A fixed shape keeps the input's rank and every static dim: only dynamic dims are fixed.
  Status CheckFixedShape(const std::string& name, const Shape& given,
                         const onnx::TensorShapeProto& declared) const {
    if (static_cast<int>(given.size()) != declared.dim_size()) {
      return InvalidArgument("{} has rank {}, but input '{}' has rank {} ({})",
                             ShapeOrigin(name, given), given.size(), name, declared.dim_size(),
                             OnnxShapeToString(declared));
    }
    for (int i = 0; i < declared.dim_size(); ++i) {
      const auto& dim = declared.dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0 &&
          dim.dim_value() != given[static_cast<size_t>(i)]) {
        return InvalidArgument(
            "{} contradicts input '{}' ({}): its dim {} is {} in the model; only dynamic dims can "
            "be fixed",
            ShapeOrigin(name, given), name, OnnxShapeToString(declared), i, dim.dim_value());
      }
    }
    return Status::Ok();
  }

  // "<batch>x3x<height>x<width>": the static dims, and the dynamic ones by name (or "<?>"),
  // so that the hint proposes no value for a dim only the user knows (a sequence length).
  static std::string DimsTemplate(const onnx::TensorShapeProto& declared) {
    std::string text;
    for (int i = 0; i < declared.dim_size(); ++i) {
      const auto& dim = declared.dim(i);
      if (i) text += 'x';
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        text += std::to_string(dim.dim_value());
      } else {
        text += "<" + (dim.has_dim_param() && !dim.dim_param().empty() ? dim.dim_param() : "?") + ">";
      }
    }
    return text;
  }

  Status AddInitializers() {  // sparse ones were refused before the checker ran
    for (const auto& init : graph_proto_.initializer()) {
      if (init.name().empty()) return InvalidModel("an initializer has no name");
      if (ids_.count(init.name())) {
        return InvalidModel("initializer '{}' is defined twice (or is also a graph input)",
                            init.name());
      }
      Tensor tensor;
      std::map<std::string, Tensor>* decoded = options_.decoded_initializers;
      if (decoded != nullptr && decoded->count(init.name())) {
        tensor = decoded->at(init.name());  // shared: constants are never written in place
      } else {
        COLLAGE_ASSIGN_OR_RETURN(tensor, TensorFromProto(init, base_dir_));
        if (decoded != nullptr) decoded->emplace(init.name(), tensor);
      }
      ids_[init.name()] = graph_.AddConstant(init.name(), std::move(tensor));
    }
    return Status::Ok();
  }

  Status Define(const onnx::NodeProto& proto, const std::string& node_name,
                const std::string& value_name, ValueId id) {
    if (!ids_.emplace(value_name, id).second) {
      return InvalidModel(
          "{} node '{}': output '{}' is already defined (by an earlier node, an "
          "initializer or a graph input)",
          proto.op_type(), node_name, value_name);
    }
    return Status::Ok();
  }

  // Constant nodes always become constants, whatever fold_constants says.
  Status AddConstantNode(const onnx::NodeProto& proto, const std::string& name) {
    if (proto.output_size() != 1 || proto.output(0).empty()) {
      return InvalidModel("Constant node '{}' must have exactly one output", name);
    }
    COLLAGE_ASSIGN_OR_RETURN(
        Tensor tensor, ConstantNodeValue(proto, fmt::format("Constant node '{}'", name), base_dir_));
    ValueId id = graph_.AddConstant(proto.output(0), std::move(tensor));
    return Define(proto, name, proto.output(0), id);
  }

  // Adds the node, or the nodes of its function body where collage has no kernel for its op.
  // `depth`: how many function bodies and If branches hold the node.
  Status AddNode(const onnx::NodeProto& proto, const std::string& name, int depth) {
    if (depth > kMaxNestingDepth) {
      return Unsupported("{} node '{}': function bodies and If branches nest deeper than {}",
                         proto.op_type(), name, kMaxNestingDepth);
    }
    Node node;
    node.name = name;
    node.op_type = proto.op_type();
    node.domain = NormalizeDomain(proto.domain());
    if (node.domain.empty() && node.op_type == "Constant") return AddConstantNode(proto, name);
    if (node.domain.empty() && node.op_type == "If") return AddIf(proto, name, depth);
    const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
    if (def == nullptr && functions_->HasBody(proto)) {
      return AddFunctionBody(proto, name, depth);
    }
    if (def == nullptr) {  // top-level ones were reported by CheckSupportedOps already
      return Unsupported("{} node '{}': op is not supported", node.op_type, name);
    }
    const std::string where = fmt::format("{} node '{}'", node.op_type, name);
    if (!OnnxCheckerKnows(model_opset_)) COLLAGE_RETURN_IF_ERROR(CheckAttributeTypes(proto, where));
    for (const auto& attr : proto.attribute()) {
      if (attr.name().empty()) return InvalidModel("{}: an attribute has no name", where);
      if (node.attributes.Has(attr.name())) {
        return InvalidModel("{}: attribute '{}' is given twice", where, attr.name());
      }
      auto value = AttributeFromProto(attr, base_dir_);
      if (!value.ok()) return value.status().WithContext(where);
      node.attributes.Set(attr.name(), std::move(value).value());
    }
    for (const std::string& input : proto.input()) {
      if (input.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      auto it = ids_.find(input);
      if (it == ids_.end()) {
        return InvalidModel(
            "{}: input '{}' is not produced by any earlier node, initializer or "
            "graph input",
            where, input);
      }
      node.inputs.push_back(it->second);
    }
    if (ComputesInFloat32Instead(*def, node, proto)) return AddInFloat32(proto, name, depth);
    // Output values exist (untyped) before inference, so ops see which optional outputs are
    // used and pointers into the value table stay valid during inference.
    for (const std::string& output : proto.output()) {
      if (output.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      ValueId id = graph_.AddValue(output, TensorType{});
      COLLAGE_RETURN_IF_ERROR(Define(proto, name, output, id));
      node.outputs.push_back(id);
    }

    // Required inputs come first in every ONNX op; an empty name there is malformed (the
    // checker says so up to opset 17; ops must not see a missing required input).
    for (int i = 0; i < def->min_inputs && i < static_cast<int>(node.inputs.size()); ++i) {
      if (node.inputs[static_cast<size_t>(i)] == kNoValue) {
        return InvalidModel("{}: input {} is required but missing (empty name)", where, i);
      }
    }
    InferContext ctx = ContextOn(node, AsHeld);
    // Which small graph inputs' values reach this node: Shape and Size read only shapes.
    uint64_t sources = 0;
    for (ValueId in : node.inputs) {
      if (auto it = value_sources_.find(in); it != value_sources_.end()) sources |= it->second;
    }
    if (Status inferred = InferNodeTypes(*def, ctx); !inferred.ok()) {
      if (inferred.code() == StatusCode::kUnsupported) NoteValueInputs(sources);
      return inferred;
    }
    if (node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size")) sources = 0;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      if (sources != 0) value_sources_[node.outputs[i]] = sources;
      const std::string& output = graph_.value(node.outputs[i]).name;
      if (!CheckedNumBytes(ctx.output_types[i])) {
        return Unsupported("{}: output '{}' would be {}, which is too large", where, output,
                           ctx.output_types[i].ToString());
      }
      producers_[output] = where;
      if (DerivesFromRange(proto)) beyond_libonnx_.insert(output);
    }

    if (options_.fold_constants && ShouldFold(ctx, graph_)) {
      COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, FoldNode(ctx, graph_));
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i] == kNoValue) continue;
        Value& v = graph_.mutable_value(node.outputs[i]);
        v.type = ctx.output_types[i];
        v.constant = std::move(outputs[i]);
      }
      return Status::Ok();
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue)
        graph_.mutable_value(node.outputs[i]).type = ctx.output_types[i];
    }
    return graph_.AddNode(std::move(node)).status();
  }

  // 16-bit float arithmetic: an op whose kernels take float32 but not float16 or bfloat16
  // computes on its 16-bit inputs widened to float32, and its float outputs are rounded back
  // (to nearest even) — what a float16 kernel does for one elementwise op; products and
  // reductions then accumulate in float32, as float16 kernels on CPUs do. The op's own type
  // inference decides, on a copy of the node: it refuses the 16-bit inputs as they are, and
  // takes them as float32.
  bool ComputesInFloat32Instead(const OpDef& def, const Node& node,
                                const onnx::NodeProto& proto) const {
    if (node.domain.empty() && (node.op_type == "Cast" || node.op_type == "CastLike")) return false;
    auto is_half = [](DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; };
    bool half = false;
    for (ValueId in : node.inputs) half |= in != kNoValue && is_half(graph_.value(in).type.dtype);
    if (!half) return false;
    Node trial = node;  // its outputs stand in for values not yet made
    for (int i = 0; i < proto.output_size(); ++i) {
      trial.outputs.push_back(proto.output(i).empty() ? kNoValue : static_cast<ValueId>(i));
    }
    std::vector<TensorType> widened;  // the inputs' types with float32 for the 16-bit ones
    widened.reserve(node.inputs.size());
    auto widen = [&](const Value& v) -> std::pair<const TensorType*, const Tensor*> {
      if (!is_half(v.type.dtype)) return AsHeld(v);
      widened.push_back(TensorType{DType::kFloat32, v.type.shape});
      return {&widened.back(), nullptr};
    };
    InferContext as_given = ContextOn(trial, AsHeld);
    if (InferNodeTypes(def, as_given).ok()) return false;
    InferContext as_float32 = ContextOn(trial, widen);
    return InferNodeTypes(def, as_float32).ok();
  }

  // The inference context of `node`: each present input's type and constant value as
  // `input_of` gives them (AsHeld: as the graph holds them so far).
  using InputOf = std::function<std::pair<const TensorType*, const Tensor*>(const Value&)>;
  InferContext ContextOn(const Node& node, const InputOf& input_of) const {
    InferContext ctx{node, opset_, {}, {}, {}};
    for (ValueId in : node.inputs) {
      const auto [type, value] =
          in == kNoValue ? std::pair<const TensorType*, const Tensor*>{nullptr, nullptr}
                         : input_of(graph_.value(in));
      ctx.input_types.push_back(type);
      ctx.input_values.push_back(value);
    }
    return ctx;
  }
  static std::pair<const TensorType*, const Tensor*> AsHeld(const Value& v) {
    return {&v.type, v.is_constant() ? &*v.constant : nullptr};
  }

  // The node on float32 copies of its 16-bit inputs, its float32 outputs cast back to the
  // 16-bit type (its other outputs, indices say, passed on as they are).
  Status AddInFloat32(const onnx::NodeProto& proto, const std::string& name, int depth) {
    int32_t half_type = onnx::TensorProto::FLOAT16;
    onnx::NodeProto widened = proto;
    widened.clear_output();
    for (int i = 0; i < proto.input_size(); ++i) {
      if (proto.input(i).empty()) continue;
      const DType dtype = graph_.value(ids_.at(proto.input(i))).type.dtype;
      if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) continue;
      half_type = static_cast<int32_t>(dtype);
      onnx::NodeProto cast;
      cast.set_op_type("Cast");
      cast.add_input(proto.input(i));
      cast.add_output(fmt::format("{}/float32_input_{}", name, i));
      auto* to = cast.add_attribute();
      to->set_name("to");
      to->set_type(onnx::AttributeProto::INT);
      to->set_i(onnx::TensorProto::FLOAT);
      COLLAGE_RETURN_IF_ERROR(AddNode(cast, fmt::format("{}/to_float32_{}", name, i), depth + 1));
      widened.set_input(i, cast.output(0));
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      widened.add_output(proto.output(i).empty() ? std::string()
                                                 : fmt::format("{}/float32_output_{}", name, i));
    }
    COLLAGE_RETURN_IF_ERROR(AddNode(widened, name + "/float32", depth + 1));
    for (int i = 0; i < proto.output_size(); ++i) {
      if (proto.output(i).empty()) continue;
      const bool is_float = graph_.value(ids_.at(widened.output(i))).type.dtype == DType::kFloat32;
      onnx::NodeProto back;
      back.set_op_type(is_float ? "Cast" : "Identity");
      back.add_input(widened.output(i));
      back.add_output(proto.output(i));
      if (is_float) {
        auto* to = back.add_attribute();
        to->set_name("to");
        to->set_type(onnx::AttributeProto::INT);
        to->set_i(half_type);
      }
      COLLAGE_RETURN_IF_ERROR(AddNode(back, fmt::format("{}/from_float32_{}", name, i), depth + 1));
    }
    return Status::Ok();
  }

  // An If whose condition is known when the model loads (a constant, or folded from constants:
  // exporters write such checks of static shapes) is replaced by the nodes of the branch it
  // takes. Its branch reads outer values by name, which are in scope here; ONNX names every
  // value of a model once (no shadowing), so the branch's names are taken over as they are.
  Status AddIf(const onnx::NodeProto& proto, const std::string& name, int depth) {
    const std::string where = fmt::format("If node '{}'", name);
    if (proto.input_size() != 1 || proto.input(0).empty()) {
      return InvalidModel("{}: has {} inputs, expected the condition only", where,
                          proto.input_size());
    }
    auto cond = ids_.find(proto.input(0));
    if (cond == ids_.end()) {
      return InvalidModel(
          "{}: input '{}' is not produced by any earlier node, initializer or "
          "graph input",
          where, proto.input(0));
    }
    const Value& cond_value = graph_.value(cond->second);
    if (!cond_value.is_constant()) {
      // A condition computed from small graph inputs (a sample rate, a flag) is known at
      // each run: a session that compiles per run binds them and takes the branch then.
      if (auto it = value_sources_.find(cond->second); it != value_sources_.end()) {
        NoteValueInputs(it->second);
      }
      return Unsupported(
          "{}: its condition '{}' is computed at run time; collage runs an If only when its "
          "condition is known when the model compiles (a constant, computed from constants and "
          "static shapes, or from small inputs that a session binds at each run)",
          where, proto.input(0));
    }
    const Tensor& flag = *cond_value.constant;
    if (flag.dtype() != DType::kBool || flag.num_elements() != 1) {
      return InvalidModel("{}: the condition must be one bool, is {}", where,
                          cond_value.type.ToString());
    }
    const bool taken = flag.data_as<bool>()[0];
    const char* branch_name = taken ? "then_branch" : "else_branch";
    const onnx::GraphProto* branch = nullptr;
    for (const auto& attr : proto.attribute()) {
      if (attr.name() == branch_name && attr.has_g()) branch = &attr.g();
    }
    if (branch == nullptr)
      return InvalidModel("{}: has no graph attribute '{}'", where, branch_name);
    if (branch->input_size() != 0) {
      return InvalidModel("{}: {} has {} inputs; If branches take none", where, branch_name,
                          branch->input_size());
    }
    if (branch->output_size() != proto.output_size()) {
      return InvalidModel("{}: {} has {} outputs for the node's {}", where, branch_name,
                          branch->output_size(), proto.output_size());
    }
    for (const auto& init : branch->initializer()) {
      if (init.name().empty())
        return InvalidModel("{}: an initializer of {} has no name", where, branch_name);
      COLLAGE_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(init, base_dir_));
      COLLAGE_RETURN_IF_ERROR(
          Define(proto, name, init.name(), graph_.AddConstant(init.name(), std::move(tensor))));
    }
    for (int i = 0; i < branch->node_size(); ++i) {
      const onnx::NodeProto& inner = branch->node(i);
      const std::string inner_name =
          name + "/" +
          (inner.name().empty() ? inner.op_type() + "_" + std::to_string(i) : inner.name());
      COLLAGE_RETURN_IF_ERROR(AddNode(inner, inner_name, depth + 1));
    }
    // The node's outputs are the branch's, renamed.
    for (int i = 0; i < proto.output_size(); ++i) {
      if (proto.output(i).empty()) continue;
      onnx::NodeProto identity;
      identity.set_op_type("Identity");
      identity.add_input(branch->output(i).name());
      identity.add_output(proto.output(i));
      COLLAGE_RETURN_IF_ERROR(AddNode(identity, name + "/output_" + std::to_string(i), depth + 1));
    }
    return Status::Ok();
  }

  void NoteValueInputs(uint64_t sources) const {
    if (options_.needs == nullptr) return;
    for (size_t i = 0; i < bindable_inputs_.size(); ++i) {
      if (sources & (uint64_t{1} << i)) options_.needs->value_inputs.push_back(bindable_inputs_[i]);
    }
  }

  Status AddFunctionBody(const onnx::NodeProto& proto, const std::string& name, int depth) {
    // Counted once for the whole call, before anything is expanded: the calls inside its
    // body are part of that count.
    if (!inside_function_) {
      const std::optional<int64_t> size =
          functions_->ExpandedSize(proto, kMaxExpandedNodes - expanded_nodes_);
      if (!size) {
        return Unsupported(
            "{} node '{}': its function body calls itself, or expands (with the other function "
            "calls of the model) to more than {} nodes",
            proto.op_type(), name, kMaxExpandedNodes);
      }
      expanded_nodes_ += *size;
    }
    std::vector<TensorType> input_types;
    for (const std::string& input : proto.input()) {
      auto it = ids_.find(input);
      input_types.push_back(it == ids_.end() ? TensorType{} : graph_.value(it->second).type);
    }
    COLLAGE_ASSIGN_OR_RETURN(
        std::vector<onnx::NodeProto> body,
        functions_->Expand(proto, name, input_types,
                           [&](const std::string& value) { return ids_.count(value) != 0; }));
    const bool outermost = !inside_function_;
    inside_function_ = true;
    Status added;
    for (const onnx::NodeProto& inner : body) {
      added = AddNode(inner, inner.name(), depth + 1);
      if (!added.ok()) break;
    }
    inside_function_ = !outermost;
    return added;
  }

  // Two independent inferences disagreeing means one of them is wrong; running a kernel on
  // a wrong shape would corrupt memory, so this is an error, not a warning.
  Status CrossCheckWithOnnxInference() {
    OnnxInferredTypes onnx_types;
    COLLAGE_RETURN_IF_ERROR(RunOnnxShapeInference(model_, options_.input_shapes, onnx_types));
    for (const auto& [name, where] : producers_) {
      auto theirs = onnx_types.find(name);
      if (theirs == onnx_types.end() || beyond_libonnx_.count(name) != 0) continue;
      const TensorType& ours = graph_.value(ids_.at(name)).type;
      if (theirs->second != ours) {
        return Internal("{}: output '{}' is inferred as {}, but ONNX shape inference says {}",
                        where, name, ours.ToString(), theirs->second.ToString());
      }
    }
    return Status::Ok();
  }

  Status AddOutputs() {
    for (const auto& output : graph_proto_.output()) {
      const std::string& name = output.name();
      if (name.empty()) return InvalidModel("a graph output has no name");
      auto it = ids_.find(name);
      if (it == ids_.end()) {
        return InvalidModel("graph output '{}' is not produced by any node, initializer or input",
                            name);
      }
      const TensorType& computed = graph_.value(it->second).type;
      COLLAGE_RETURN_IF_ERROR(CheckDeclaredOutput(output, computed));
      graph_.AddOutput(it->second);
    }
    return Status::Ok();
  }

  // A static declaration must match what the graph computes. (Fixing an input's dynamic dims
  // may fix an output's: its declared dims are compared where they are static.)
  Status CheckDeclaredOutput(const onnx::ValueInfoProto& output, const TensorType& computed) const {
    const onnx::TypeProto& type = output.type();
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return Status::Ok();
    if (!type.has_tensor_type()) {
      return Unsupported("graph output '{}' is {}; only tensor outputs are supported",
                         output.name(), NonTensorKind(type));
    }
    const int32_t elem_type = type.tensor_type().elem_type();
    if (elem_type != 0 && elem_type != static_cast<int32_t>(computed.dtype)) {
      return InvalidModel("graph output '{}' is declared {}, but the graph computes {}",
                          output.name(), OnnxElemTypeName(elem_type), computed.ToString());
    }
    if (!type.tensor_type().has_shape()) return Status::Ok();
    const onnx::TensorShapeProto& shape = type.tensor_type().shape();
    bool matches = shape.dim_size() == static_cast<int>(computed.shape.size());
    for (int i = 0; matches && i < shape.dim_size(); ++i) {
      const auto& dim = shape.dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0 &&
          dim.dim_value() != computed.shape[static_cast<size_t>(i)]) {
        matches = false;
      }
    }
    if (!matches) {
      return InvalidModel(
          "graph output '{}' is declared with shape ({}), but the graph computes {}", output.name(),
          OnnxShapeToString(shape), computed.ToString());
    }
    return Status::Ok();
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_proto_;
  const ImportOptions& options_;
  const std::string base_dir_;
  Graph graph_;
  int64_t model_opset_ = 0;  // the default-domain opset the model imports
  int64_t opset_ = 0;        // the opset whose semantics the graph has (see ResolveLegacyOpset)
  std::set<std::string> imported_domains_;
  std::vector<std::string> node_names_;
  std::optional<FunctionExpander> functions_;     // set once the opset is known
  // Graph inputs small enough to bind (ImportNeeds::value_inputs), and for each value the
  // bit set of those whose values flow into it (absent: none).
  std::vector<std::string> bindable_inputs_;
  int64_t expanded_nodes_ = 0;    // nodes function calls expand to (kMaxExpandedNodes)
  bool inside_function_ = false;  // adding the nodes of a function body
  std::unordered_map<ValueId, uint64_t> value_sources_;
  std::unordered_map<std::string, ValueId> ids_;  // ONNX value name → IR value
  std::map<std::string, std::string> producers_;  // node output → "<op> node '<name>'"
  // Outputs whose libonnx type cannot be trusted: libonnx 1.12 counts Range's elements as
  // (limit - start) / delta in int64, which overflows for bounds near the int64 limits (its
  // count is then wrong or 0, while ours is exact), and so is everything computed from it.
  std::set<std::string> beyond_libonnx_;

  bool DerivesFromRange(const onnx::NodeProto& proto) const {
    if (proto.op_type() == "Range" && proto.domain().empty()) return true;
    return std::any_of(proto.input().begin(), proto.input().end(),
                       [&](const std::string& in) { return beyond_libonnx_.count(in) != 0; });
  }
};

}  // namespace

StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  COLLAGE_ASSIGN_OR_RETURN(ParsedModel parsed, ParseOnnxFile(path));
  return ImportParsed(parsed, options);
}

StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const ImportOptions& options,
                                const std::string& source_name) {
  COLLAGE_ASSIGN_OR_RETURN(ParsedModel parsed, ParseOnnxBytes(bytes, source_name));
  return ImportParsed(parsed, options);
}

StatusOr<ParsedModel> ParseOnnxFile(const std::string& path) {
  // protobuf parses at most 2 GiB; a larger file is refused before it is read.
  auto bytes = ReadRegularFile(path, INT_MAX,
                               "protobuf cannot parse an ONNX file over 2 GiB; store the weights "
                               "as external data");
  if (!bytes.ok()) return bytes.status();
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  COLLAGE_ASSIGN_OR_RETURN(ParsedModel parsed, ParseOnnxBytes(*bytes, path));
  parsed.base_dir = base_dir.empty() ? "." : base_dir;
  return parsed;
}

StatusOr<ParsedModel> ParseOnnxBytes(const std::string& bytes, const std::string& source_name) {
  if (bytes.empty()) {
    return InvalidModel("{} is not a valid ONNX model (it is empty)", source_name);
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Unsupported(
        "{} is larger than 2 GiB, which protobuf cannot parse; store the weights "
        "as external data",
        source_name);
  }
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidModel("{} is not a valid ONNX model (protobuf parse failed)", source_name);
  }
  return ParsedModel{std::move(model), source_name, ""};
}

StatusOr<Graph> ImportParsed(const ParsedModel& model, const ImportOptions& options) {
  return ImportOnnxModel(*model.proto, options, model.source_name, model.base_dir);
}

namespace {

DeclaredTensor Declared(const onnx::ValueInfoProto& value) {
  DeclaredTensor declared{value.name(), DType::kUndefined, {}};
  if (!value.type().has_tensor_type()) return declared;
  const auto& tensor = value.type().tensor_type();
  if (auto dtype = DTypeFromOnnx(tensor.elem_type()); dtype.ok()) declared.dtype = *dtype;
  for (const auto& dim : tensor.shape().dim()) {
    declared.shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
  }
  return declared;
}

}  // namespace

std::vector<DeclaredTensor> DeclaredInputs(const onnx::ModelProto& model) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<DeclaredTensor> inputs;
  for (const auto& input : model.graph().input()) {
    if (!initializers.count(input.name())) inputs.push_back(Declared(input));
  }
  return inputs;
}

std::vector<DeclaredTensor> DeclaredOutputs(const onnx::ModelProto& model) {
  std::vector<DeclaredTensor> outputs;
  for (const auto& output : model.graph().output()) outputs.push_back(Declared(output));
  return outputs;
}

StatusOr<Graph> ImportOnnxModel(const onnx::ModelProto& model, const ImportOptions& options,
                                const std::string& source_name, const std::string& base_dir) {
  // No exception may leave the frontend; the ones libonnx throws are caught where it is
  // called, so anything reaching here is a bug (or memory exhaustion) inside collage.
  try {
    Importer importer(model, options, base_dir);
    auto graph = importer.Run();
    if (!graph.ok()) return graph.status().WithContext(source_name);
    return graph;
  } catch (const std::exception& e) {
    return Internal("{}: exception while importing: {}", source_name, e.what());
  }
}

}  // namespace collage
