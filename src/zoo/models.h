// The builders behind ZooModels(), one file each.
#pragma once

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage {

StatusOr<Graph> BuildResNet50();        // resnet.cc
StatusOr<Graph> BuildResNeXt50();       // resnet.cc
StatusOr<Graph> BuildResNet3d50();      // resnet3d50.cc
StatusOr<Graph> BuildMobileNetV2();     // mobilenet_v2.cc
StatusOr<Graph> BuildBertBase();        // bert_base.cc
StatusOr<Graph> BuildDcganGenerator();  // dcgan.cc
StatusOr<Graph> BuildNasRnn();          // nasrnn.cc
StatusOr<Graph> BuildNasNetA();         // nasnet_a.cc
StatusOr<Graph> BuildGpt2Small();       // gpt2.cc

}  // namespace collage
