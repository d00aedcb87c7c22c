// The built-in models: built in C++ with random weights from a fixed seed, so every run
// and every export gives the very same model.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage {

struct ZooModel {
  std::string name;         // "resnet50"
  std::string description;  // one line: what it is, input shape
  std::function<StatusOr<Graph>()> build;
};

const std::vector<ZooModel>& ZooModels();
// NotFound (listing the known names) for an unknown name.
StatusOr<Graph> BuildZooModel(const std::string& name);

}  // namespace collage
