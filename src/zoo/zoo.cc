#include "zoo/zoo.h"

#include "collage/sdk/errors.h"
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
      {"resnext50",
       "ResNeXt-50 32x4d (torchvision, BatchNorm folded), input float32 1x3x224x224",
       BuildResNeXt50},
      {"dcgan", "DCGAN generator (ngf 64, BatchNorm folded), input float32 latent 1x100x1x1",
       BuildDcganGenerator},
      {"nasrnn", "NAS-RNN cell unrolled over 8 steps, hidden 512, input float32 1x8x512",
       BuildNasRnn},
      {"nasnet_a", "NASNet-A Mobile 4@1056 (BatchNorm folded), input float32 1x3x224x224",
       BuildNasNetA},
      {"resnet3d50",
       "3D-ResNet-50 (Kinetics-400, BatchNorm folded), input float32 clip 1x3x16x112x112",
       BuildResNet3d50},
      {"gpt2",
       "GPT-2 small, 12 causal self-attention blocks, hidden 768, input int64 input_ids 1x128",
       BuildGpt2Small},
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
