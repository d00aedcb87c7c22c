// What chose a placement, spelled for plans and reports and read back.
#include "collage/placement_source.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

TEST(PlacementSourceTest, EveryKindIsReadBackAsWritten) {
  for (const PlacementSource& source :
       {PlacementSource::OpLevel(), PlacementSource::TwoLevel(),
        PlacementSource::SingleBackend("onednn"),
        PlacementSource::WholeGraph("openvino", Precision::kFloat32),
        PlacementSource::WholeGraph("openvino", Precision::kBfloat16),
        PlacementSource::OtherShapes()}) {
    const std::string name = PlacementSourceName(source);
    EXPECT_EQ(PlacementSourceNamed(name), source) << name;
  }
  EXPECT_EQ(PlacementSourceName(PlacementSource::SingleBackend("xnnpack")),
            "single-backend:xnnpack");
  EXPECT_EQ(PlacementSourceName(PlacementSource::WholeGraph("openvino", Precision::kBfloat16)),
            "whole-graph:openvino bf16");
}

TEST(PlacementSourceTest, OtherTextIsNoSource) {
  for (const char* text : {"", "op-level ", "three-level", "single-backend:", "whole-graph:",
                           "whole-graph: bf16", "whole-graph:openvino fp8", "single-backend"}) {
    EXPECT_FALSE(PlacementSourceNamed(text).has_value()) << "'" << text << "'";
  }
}

TEST(PlacementSourceTest, LabelsSayWhatRan) {
  EXPECT_EQ(PlacementSourceLabel(PlacementSource::OpLevel()), "op-level plan");
  EXPECT_EQ(PlacementSourceLabel(PlacementSource::SingleBackend("onednn")), "onednn alone");
  EXPECT_EQ(PlacementSourceLabel(PlacementSource::WholeGraph("openvino", Precision::kBfloat16)),
            "openvino bf16's whole-graph group");
  EXPECT_TRUE(PlacementSource::TwoLevel().is_search());
  EXPECT_FALSE(PlacementSource::SingleBackend("native").is_search());
}

}  // namespace
}  // namespace collage
