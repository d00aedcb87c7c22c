// Groups skip messages into reasons for the --list-unsupported histogram: the parts that name
// one case (the model's path, node names) are replaced, so that "op Foo (node 'a')" in one case
// and "op Foo (node 'b')" in another count as one reason.
#pragma once

#include <string>
#include <vector>

namespace collage::conformance {

// One key per problem in the message (a loader that lists several problems puts one per
// line); duplicates removed.
std::vector<std::string> UnsupportedReasonKeys(const std::string& message);

}  // namespace collage::conformance
