#include "onnx/function_expansion.h"

#include <fmt/ranges.h>

#include <exception>
#include <set>
#include <unordered_map>

#include "collage/sdk/errors.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_checks.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"

namespace collage {
namespace {

std::string NormalizeDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

// The default-domain opset a function body is written for; `fallback` when it names none.
int64_t BodyOpset(const onnx::FunctionProto& body, int64_t fallback) {
  for (const auto& import : body.opset_import()) {
    if (NormalizeDomain(import.domain()).empty()) return import.version();
  }
  return fallback;
}

// Gives every value defined inside the body a name of the calling graph: formal inputs and
// outputs become the node's actual ones, the rest fresh names.
class Renamer {
 public:
  Renamer(std::string prefix, const std::function<bool(const std::string&)>& taken)
      : prefix_(std::move(prefix)), taken_(taken) {}

  void Bind(const std::string& formal, const std::string& actual) { names_[formal] = actual; }
  bool Bound(const std::string& formal) const { return names_.count(formal) != 0; }

  // A fresh graph name for a value the body defines.
  const std::string& Define(const std::string& formal) {
    auto it = names_.find(formal);
    if (it != names_.end()) return it->second;
    std::string name = prefix_ + formal;
    for (int k = 1; taken_(name) || used_.count(name); ++k) {
      name = prefix_ + formal + "_" + std::to_string(k);
    }
    used_.insert(name);
    return names_[formal] = name;
  }

  const std::string* Find(const std::string& formal) const {
    auto it = names_.find(formal);
    return it == names_.end() ? nullptr : &it->second;
  }

 private:
  std::string prefix_;
  const std::function<bool(const std::string&)>& taken_;
  std::unordered_map<std::string, std::string> names_;
  std::set<std::string> used_;
};

}  // namespace

// A function body and the defaults of the op's attributes (ONNX functions' schemas give them).
struct FunctionExpander::Body {
  onnx::FunctionProto function;
  std::map<std::string, onnx::AttributeProto> defaults;
};

FunctionExpander::FunctionExpander(const onnx::ModelProto& model, int64_t opset) : opset_(opset) {
  for (const auto& function : model.functions()) {
    local_.emplace(std::make_pair(NormalizeDomain(function.domain()), function.name()), &function);
  }
}

bool FunctionExpander::HasBody(const onnx::NodeProto& node) const {
  const std::string domain = NormalizeDomain(node.domain());
  if (local_.count({domain, node.op_type()})) return true;
  if (!domain.empty()) return false;
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
  return schema != nullptr && (schema->HasFunction() || schema->HasContextDependentFunction());
}

std::optional<int64_t> FunctionExpander::ExpandedSize(const onnx::NodeProto& node,
                                                      int64_t limit) const {
  const auto key = std::make_pair(NormalizeDomain(node.domain()), node.op_type());
  auto local = local_.find(key);
  if (local == local_.end()) return 1;
  if (auto known = sizes_.find(key); known != sizes_.end()) {
    if (known->second < 0 || known->second > limit) return std::nullopt;
    return known->second;
  }
  sizes_[key] = -1;  // a call back to this function while it is summed is a cycle
  int64_t total = 0;
  for (const auto& inner : local->second->node()) {
    const std::optional<int64_t> size = ExpandedSize(inner, limit - total);
    if (!size) {
      sizes_.erase(key);  // not a size: above this limit, or a cycle (found again next time)
      return std::nullopt;
    }
    total += *size;
  }
  sizes_[key] = total;
  if (total > limit) return std::nullopt;
  return total;
}

StatusOr<FunctionExpander::Body> FunctionExpander::BodyOf(
    const onnx::NodeProto& node, const std::vector<TensorType>& input_types) const {
  const std::string domain = NormalizeDomain(node.domain());
  auto local = local_.find({domain, node.op_type()});
  if (local != local_.end()) return Body{*local->second, {}};
  const onnx::OpSchema* schema =
      domain.empty() ? onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "")
                     : nullptr;
  if (schema == nullptr) return Unsupported("op {} has no function body", node.op_type());
  Body result;
  onnx::FunctionProto& body = result.function;
  try {
    if (schema->HasContextDependentFunction()) {
      std::vector<onnx::TypeProto> types(input_types.size());
      for (size_t i = 0; i < input_types.size(); ++i) {
        if (input_types[i].dtype != DType::kUndefined) FillTypeProto(input_types[i], types[i]);
      }
      onnx::FunctionBodyBuildContextImpl context(node, types);
      if (!schema->BuildContextDependentFunction(context, body)) {
        return Unsupported("ONNX has no function body of {} for these inputs", node.op_type());
      }
    } else if (schema->HasFunction()) {
      body = *schema->GetFunction();
    } else {
      return Unsupported("op {} has no function body", node.op_type());
    }
  } catch (const std::exception& e) {
    return InvalidModel("ONNX could not build the function body of {}: {}", node.op_type(),
                        e.what());
  }
  if (body.opset_import_size() == 0) {
    auto* import = body.add_opset_import();
    import->set_domain("");
    import->set_version(schema->since_version());
  }
  for (const auto& [name, attribute] : schema->attributes()) {
    if (attribute.default_value.type() != onnx::AttributeProto::UNDEFINED) {
      result.defaults.emplace(name, attribute.default_value);
    }
  }
  return result;
}

StatusOr<std::vector<onnx::NodeProto>> FunctionExpander::Expand(
    const onnx::NodeProto& node, const std::string& node_name,
    const std::vector<TensorType>& input_types,
    const std::function<bool(const std::string&)>& taken) const {
  COLLAGE_ASSIGN_OR_RETURN(Body found, BodyOf(node, input_types));
  const onnx::FunctionProto& body = found.function;
  const std::string where =
      fmt::format("{} node '{}' (run as its function body)", node.op_type(), node_name);

  // The body's ops mean what they meant at its opset; the graph runs them at the model's.
  const int64_t body_opset = BodyOpset(body, opset_);
  if (body_opset != opset_) {
    std::set<std::string> changed;
    for (const auto& inner : body.node()) {
      if (NormalizeDomain(inner.domain()).empty() && inner.op_type() != "Constant" &&
          !OnnxOpUnchanged(inner.op_type(), body_opset, opset_)) {
        changed.insert(inner.op_type());
      }
    }
    if (!changed.empty()) {
      return Unsupported(
          "{}: the body is written for opset {}, and these of its ops differ at the model's "
          "opset {}: {}",
          where, body_opset, opset_, fmt::join(changed, ", "));
    }
  }

  if (node.output_size() > body.output_size()) {
    return InvalidModel("{}: has {} outputs, its function has {}", where, node.output_size(),
                        body.output_size());
  }

  Renamer names(node_name + "/", taken);
  for (int i = 0; i < body.input_size(); ++i) {
    names.Bind(body.input(i), i < node.input_size() ? node.input(i) : std::string());
  }
  for (int i = 0; i < body.output_size(); ++i) {
    // An output that is also an input stays bound to the input (an Identity copies it below).
    if (i < node.output_size() && !node.output(i).empty() && !names.Bound(body.output(i))) {
      names.Bind(body.output(i), node.output(i));
    }
  }
  std::unordered_map<std::string, const onnx::AttributeProto*> attributes;
  for (const auto& attr : node.attribute()) attributes[attr.name()] = &attr;

  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(static_cast<size_t>(body.node_size()));
  std::set<std::string> computed;  // the body's own names its nodes compute
  for (int n = 0; n < body.node_size(); ++n) {
    const onnx::NodeProto& inner = body.node(n);
    // A subgraph inside the body (an If's branches) reads the body's names, which the
    // renaming below does not reach: it could read a value of the calling graph that happens
    // to have the same name.
    for (const auto& attr : inner.attribute()) {
      if (attr.has_g() || attr.graphs_size() > 0) {
        return Unsupported(
            "{}: its body's {} node holds a subgraph ('{}'), which collage does "
            "not run inside function bodies",
            where, inner.op_type(), attr.name());
      }
    }
    onnx::NodeProto out;
    out.set_op_type(inner.op_type());
    out.set_domain(inner.domain());
    out.set_name(node_name + "/" +
                 (inner.name().empty() ? inner.op_type() + "_" + std::to_string(n) : inner.name()));
    for (const std::string& input : inner.input()) {
      if (input.empty()) {
        out.add_input();
        continue;
      }
      const std::string* actual = names.Find(input);
      if (actual == nullptr) {
        return InvalidModel("{}: the body reads '{}', which none of its nodes or inputs defines",
                            where, input);
      }
      out.add_input(*actual);
    }
    for (const std::string& output : inner.output()) {
      out.add_output(output.empty() ? std::string() : names.Define(output));
      computed.insert(output);
    }
    for (const auto& attr : inner.attribute()) {
      if (attr.ref_attr_name().empty()) {
        *out.add_attribute() = attr;
        continue;
      }
      // A reference to an attribute the caller did not set takes the op's default; where it
      // has none, the inner attribute stays unset and the inner op's default applies.
      const onnx::AttributeProto* value = nullptr;
      auto given = attributes.find(attr.ref_attr_name());
      if (given != attributes.end()) {
        value = given->second;
      } else if (auto fallback = found.defaults.find(attr.ref_attr_name());
                 fallback != found.defaults.end()) {
        value = &fallback->second;
      }
      if (value == nullptr) continue;
      onnx::AttributeProto* copy = out.add_attribute();
      *copy = *value;
      copy->set_name(attr.name());
    }
    nodes.push_back(std::move(out));
  }
  // Every output the caller uses must come out of the body.
  for (int i = 0; i < node.output_size() && i < body.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    // An output that is one of the node's inputs passed through is produced by an Identity.
    if (!computed.count(body.output(i))) {
      const std::string* source = nullptr;
      for (int k = 0; k < body.input_size(); ++k) {
        if (body.input(k) == body.output(i)) source = names.Find(body.input(k));
      }
      if (source == nullptr || source->empty()) {
        return InvalidModel("{}: the body does not compute its output '{}'", where, body.output(i));
      }
      onnx::NodeProto identity;
      identity.set_op_type("Identity");
      identity.set_name(node_name + "/Identity_output_" + std::to_string(i));
      identity.add_input(*source);
      identity.add_output(node.output(i));
      nodes.push_back(std::move(identity));
    }
  }
  return nodes;
}

}  // namespace collage
