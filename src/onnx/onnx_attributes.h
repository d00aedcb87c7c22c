// ONNX AttributeProto ↔ collage Attribute. Graph-, sparse- and type-valued attributes have no
// counterpart in the IR and are refused as unsupported.
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/sdk/attribute.h"

namespace onnx {
class AttributeProto;
}

namespace collage {

// Tensor attributes with external data are read relative to `base_dir`. Messages name the
// attribute; callers add the node.
StatusOr<Attribute> AttributeFromProto(const onnx::AttributeProto& proto,
                                       const std::string& base_dir);
Status AttributeToProto(const std::string& name, const Attribute& attribute,
                        onnx::AttributeProto& proto);

// The attribute's type as an AttributeProto::AttributeType value: its `type` field, or, when
// that is unset (IR version 1 models), the type of the field that holds the value.
int EffectiveAttributeType(const onnx::AttributeProto& proto);

}  // namespace collage
