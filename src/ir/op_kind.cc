#include "collage/sdk/op_kind.h"

namespace collage {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kBroadcast: return "broadcast";
    case OpKind::kInjective: return "injective";
    case OpKind::kReduction: return "reduction";
    case OpKind::kOutEWiseFusable: return "out-elementwise-fusable";
    case OpKind::kOpaque: return "opaque";
  }
  return "unknown";
}

}  // namespace collage
