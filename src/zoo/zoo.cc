#include "zoo/zoo.h"

#include "util/errors.h"
#include "zoo/models.h"

namespace collage {

const std::vector<ZooModel>& ZooModels() {
  static const std::vector<ZooModel> kModels = {
      {"resnet50", "ResNet-50 v1.5 (torchvision, BatchNorm folded), input float32 1x3x224x224",
       BuildResNet50},
      {"mobilenetv2",
       "MobileNetV2 width 1.0 (torchvision, BatchNorm folded), input float32 1x3x224x224",
       BuildMobileNetV2},
      {"bert_base",
       "BERT-base encoder, 12 layers, hidden 768, no attention mask, input int64 input_ids 1x128",
       BuildBertBase},
  };
  return kModels;
}

StatusOr<Graph> BuildZooModel(const std::string& name) {
  std::string known;
  for (const ZooModel& model : ZooModels()) {
    if (model.name == name) return model.build();
    known += known.empty() ? model.name : ", " + model.name;
  }
  return NotFound("no built-in model named '{}' (known: {})", name, known);
}

}  // namespace collage
