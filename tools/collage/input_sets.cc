#include "input_sets.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "collage/tensor_file.h"
#include "commands.h"

namespace collage::cli {
namespace {

namespace fs = std::filesystem;

bool IsTensorFile(const fs::path& path) {
  return path.extension() == ".npy" || path.extension() == ".pb";
}

// The names, sorted, of the entries of `dir` (an error when it cannot be listed).
StatusOr<std::vector<fs::path>> SortedEntries(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(it->path());
  }
  if (error)
    return InvalidArgument(fmt::format("cannot list {}: {}", dir.string(), error.message()));
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The tensor files of `dir` as one set; an empty set when it has none.
StatusOr<NamedInputSet> ReadSet(const fs::path& dir) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<fs::path> entries, SortedEntries(dir));
  NamedInputSet set;
  for (const fs::path& path : entries) {
    if (!IsTensorFile(path)) continue;
    const std::string name = path.stem().string();
    if (std::any_of(set.begin(), set.end(), [&](const auto& item) { return item.first == name; })) {
      return InvalidArgument(
          fmt::format("{}: input '{}' is given twice (.npy and .pb)", dir.string(), name));
    }
    COLLAGE_ASSIGN_OR_RETURN(Tensor tensor, ReadTensorFile(path.string()));
    set.emplace_back(name, std::move(tensor));
  }
  return set;
}

}  // namespace

StatusOr<std::vector<NamedInputSet>> ReadInputSets(const std::string& dir) {
  std::error_code error;
  // symlink_status: a link to a folder is refused like a link to a file.
  if (!fs::is_directory(fs::symlink_status(dir, error))) {
    return InvalidArgument(fmt::format("--calibration-inputs {}: not a folder", dir));
  }
  COLLAGE_ASSIGN_OR_RETURN(NamedInputSet direct, ReadSet(dir));
  if (!direct.empty()) return std::vector<NamedInputSet>{std::move(direct)};
  COLLAGE_ASSIGN_OR_RETURN(std::vector<fs::path> entries, SortedEntries(dir));
  std::vector<NamedInputSet> sets;
  for (const fs::path& path : entries) {
    if (!fs::is_directory(fs::symlink_status(path, error))) continue;
    if (sets.size() == kMaxInputSets) {
      return InvalidArgument(
          fmt::format("--calibration-inputs {}: more than {} input sets", dir, kMaxInputSets));
    }
    COLLAGE_ASSIGN_OR_RETURN(NamedInputSet set, ReadSet(path));
    if (set.empty())
      return InvalidArgument(fmt::format("{}: no .npy or .pb input files", path.string()));
    sets.push_back(std::move(set));
  }
  if (sets.empty()) {
    return InvalidArgument(fmt::format(
        "--calibration-inputs {}: no .npy or .pb input files, nor folders of them", dir));
  }
  return sets;
}

}  // namespace collage::cli
