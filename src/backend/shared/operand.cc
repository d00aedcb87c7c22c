#include "backend/shared/operand.h"

#include "collage/sdk/errors.h"

namespace collage {

StatusOr<Operand> Operand::Resolve(const CompileRequest& request, ValueId value) {
  const Value& v = request.graph->value(value);
  if (v.type.dtype != DType::kFloat32) {
    return Unsupported("value '{}' is {}, only float32 is supported", v.name, v.type.ToString());
  }
  Operand operand;
  if (v.is_constant()) {
    const float* data = v.constant->data_as<float>();
    operand.constant_.assign(data, data + v.constant->num_elements());
    return operand;
  }
  operand.input_ = request.input_index(value);
  if (operand.input_ < 0) {
    return Internal("value '{}' is neither a constant nor an input of the group", v.name);
  }
  return operand;
}

}  // namespace collage
