// `--calibration-inputs DIR`: sets of a model's inputs read from a folder, one tensor file per
// input name (NAME.npy or NAME.pb), either directly in DIR (one set) or in each of DIR's
// subfolders (one set per subfolder, in name order).
#pragma once

#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/status.h"

namespace collage::cli {

// Every set, each naming its inputs by file name. Errors name the path: not a folder, no
// tensor files, a file that is not a tensor (ReadTensorFile refuses links, FIFOs, devices and
// oversized files), more than kMaxInputSets sets.
StatusOr<std::vector<NamedInputSet>> ReadInputSets(const std::string& dir);

inline constexpr size_t kMaxInputSets = 64;

}  // namespace collage::cli
