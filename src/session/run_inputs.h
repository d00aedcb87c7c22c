// The inputs a Run is given, checked against the model's: every input present, no unknown
// name, each of its declared dtype and shape, with data. One check for sessions of fixed
// shapes and for those that compile per run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/session.h"

namespace collage {

// `declared`: the session's inputs. A dim < 0 accepts any size, and a declaration without
// dims (kAnyRankIfUnshaped) any rank: the import of a session that compiles per run checks
// those. Errors are InvalidArgument and name the input.
enum class UnshapedInputs { kScalar, kAnyRankIfUnshaped };
Status CheckRunInputs(const std::vector<TensorInfo>& declared,
                      const std::map<std::string, Tensor>& inputs,
                      UnshapedInputs unshaped = UnshapedInputs::kScalar);
// The same, for inputs given in the declared order (the library's own callers: a staged
// model's segments, run at every iteration of a loop).
Status CheckOrderedRunInputs(const std::vector<TensorInfo>& declared,
                             const std::vector<Tensor>& inputs,
                             UnshapedInputs unshaped = UnshapedInputs::kScalar);

}  // namespace collage
