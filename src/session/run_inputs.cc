#include "session/run_inputs.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

bool Fits(const Shape& declared, const Shape& given, UnshapedInputs unshaped) {
  if (declared.empty() && unshaped == UnshapedInputs::kAnyRankIfUnshaped) return true;
  if (declared.size() != given.size()) return false;
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d] >= 0 && declared[d] != given[d]) return false;
  }
  return true;
}

bool HasDynamicDim(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
}

Status CheckRunInput(const TensorInfo& info, const Tensor& t, UnshapedInputs unshaped) {
  if (info.dtype != DType::kUndefined && t.dtype() != info.dtype) {
    return InvalidArgument("input '{}' has dtype {}, the model expects {}", info.name,
                           DTypeName(t.dtype()), DTypeName(info.dtype));
  }
  if (!Fits(info.shape, t.shape(), unshaped)) {
    return InvalidArgument("input '{}' has shape {}, the model expects {}{}", info.name,
                           ShapeToString(t.shape()), ShapeToString(info.shape),
                           HasDynamicDim(info.shape) ? " (?: any size)" : "");
  }
  if (t.data() == nullptr && t.nbytes() > 0) {
    return InvalidArgument("input '{}' has no data", info.name);
  }
  return Status::Ok();
}

}  // namespace

Status CheckOrderedRunInputs(const std::vector<TensorInfo>& declared,
                             const std::vector<Tensor>& inputs, UnshapedInputs unshaped) {
  if (inputs.size() != declared.size()) {
    return InvalidArgument("the model takes {} inputs, {} were given", declared.size(),
                           inputs.size());
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    COLLAGE_RETURN_IF_ERROR(CheckRunInput(declared[i], inputs[i], unshaped));
  }
  return Status::Ok();
}

Status CheckRunInputs(const std::vector<TensorInfo>& declared,
                      const std::map<std::string, Tensor>& inputs, UnshapedInputs unshaped) {
  std::vector<std::string> missing;
  for (const TensorInfo& info : declared) {
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      missing.push_back(info.name);
      continue;
    }
    COLLAGE_RETURN_IF_ERROR(CheckRunInput(info, it->second, unshaped));
  }
  if (!missing.empty()) return InvalidArgument("missing input(s): {}", fmt::join(missing, ", "));
  for (const auto& given : inputs) {
    const bool known = std::any_of(declared.begin(), declared.end(), [&](const TensorInfo& info) {
      return info.name == given.first;
    });
    if (!known) {
      std::vector<std::string> names;
      for (const TensorInfo& info : declared) names.push_back(info.name);
      return InvalidArgument("the model has no input named '{}' (its inputs: {})", given.first,
                             fmt::join(names, ", "));
    }
  }
  return Status::Ok();
}

}  // namespace collage
