// Patterns read from text, the form `collage backends -v` prints them in
// ("Relu(Conv(any, const, const?))"): how a plug-in written against the C interface
// (collage/plugin_c_api.h), which cannot build Pattern objects, declares its rules.
#pragma once

#include <string_view>

#include "collage/sdk/pattern.h"
#include "collage/status.h"

namespace collage {

// Grammar (spaces are ignored between tokens):
//   pattern := term '?'?                          optional input
//   term    := 'any' | 'const'                   any value / a constant
//            | '(' pattern ('|' pattern)+ ')'    alternatives
//            | ops ('(' (pattern (',' pattern)*)? ')')?   an op; without parentheses its
//                                                          inputs are not looked at
//   ops     := NAME ('|' NAME)*                   op types, "domain::Op" outside ONNX's
// Refuses anything else, saying where; a top-level pattern must be an op.
StatusOr<Pattern> ParsePatternText(std::string_view text);

}  // namespace collage
