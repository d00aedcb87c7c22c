// The builders behind ZooModels(), one file each.
#pragma once

#include "collage/status.h"
#include "ir/graph.h"

namespace collage {

StatusOr<Graph> BuildResNet50();     // resnet50.cc
StatusOr<Graph> BuildMobileNetV2();  // mobilenet_v2.cc
StatusOr<Graph> BuildBertBase();     // bert_base.cc

}  // namespace collage
