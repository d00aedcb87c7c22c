// ShuffleNet's channel operations on the oneDNN backend: the channel shuffle (Reshape,
// Transpose, Reshape) as one shuffle primitive, and Slice / Split on the channel axis as
// reorders, plain and in the layout oneDNN picks, against the reference kernels.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

using Ints = std::vector<int64_t>;

// x [n, c, *spatial] -> Reshape [n, g, c/g, *spatial] -> Transpose `perm` -> Reshape back.
// A Relu on each side keeps the shuffle's input and output plain graph values.
Graph ShuffleGraph(int64_t n, int64_t c, int64_t g, const Shape& spatial, const Ints& perm,
                   Shape grouped = {}) {
  GraphBuilder b("shuffle");
  Shape shape = {n, c};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  if (grouped.empty()) {
    grouped = {n, g, c / g};
    grouped.insert(grouped.end(), spatial.begin(), spatial.end());
  }
  ValueId x = b.Input("x", DType::kFloat32, shape);
  ValueId r = b.Node("Reshape", {x, b.Ints("grouped", grouped)});
  ValueId t = b.Node("Transpose", {r}, {{"perm", perm}});
  b.Output(b.Node("Reshape", {t, b.Ints("back", shape)}));
  return BuildOrFail(std::move(b));
}

TEST(OnednnChannelShuffle, MatchesReferenceForGroupCountsAndBatches) {
  for (int64_t g : {2, 3, 4}) {
    for (int64_t c : {g * 2, g * 29, 232 - 232 % g}) {
      for (int64_t n : {1, 2}) {
        SCOPED_TRACE(fmt::format("g={} c={} n={}", g, c, n));
        Graph graph = ShuffleGraph(n, c, g, {7, 5}, {0, 2, 1, 3, 4});
        auto offered = CheckAllCandidates(graph, "onednn", 1e-6);
        EXPECT_TRUE(Offers(offered, "channel_shuffle"));
        ExpectRuleMatches(graph, "onednn", "channel_shuffle", 3);
      }
    }
  }
}

TEST(OnednnChannelShuffle, VolumesShuffleToo) {
  Graph graph = ShuffleGraph(1, 24, 3, {2, 3, 4}, {0, 2, 1, 3, 4, 5});
  EXPECT_TRUE(Offers(CheckAllCandidates(graph, "onednn", 1e-6), "channel_shuffle"));
}

TEST(OnednnChannelShuffle, BlockedVariantMatchesReference) {
  // ShuffleNet v2's first stage: 116 channels in two groups, 28x28.
  Graph graph = ShuffleGraph(1, 116, 2, {28, 28}, {0, 2, 1, 3, 4});
  auto offered = CheckAllCandidates(graph, "onednn", 1e-6);
  EXPECT_TRUE(Offers(offered, "channel_shuffle"));
  EXPECT_TRUE(Offers(offered, "channel_shuffle_blocked"));
}

TEST(OnednnChannelShuffle, OtherReshapeTransposeTriplesAreRefused) {
  auto refused = [](const Graph& graph) {
    EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_shuffle").empty());
    EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_shuffle_blocked").empty());
  };
  // A transpose of the spatial axes, not of the channel groups.
  refused(ShuffleGraph(1, 12, 3, {4, 6}, {0, 1, 2, 4, 3}));
  // The groups split from the height, not the channels: [1, 12, 4, 6] -> [1, 12, 2, 2, 6].
  refused(ShuffleGraph(1, 12, 3, {4, 6}, {0, 2, 1, 3, 4}, {1, 12, 2, 2, 6}));
  // The channels grouped, but the reshape back does not restore the image.
  {
    GraphBuilder b("not_back");
    ValueId x = b.Input("x", DType::kFloat32, {1, 12, 4, 6});
    ValueId r = b.Node("Reshape", {x, b.Ints("grouped", {1, 3, 4, 4, 6})});
    ValueId t = b.Node("Transpose", {r}, {{"perm", Ints{0, 2, 1, 3, 4}}});
    b.Output(b.Node("Reshape", {t, b.Ints("flat", {1, 12, 24})}));
    refused(BuildOrFail(std::move(b)));
  }
  // The grouped view is read by another node too: the shuffle is not a group of its own.
  {
    GraphBuilder b("escapes");
    ValueId x = b.Input("x", DType::kFloat32, {1, 12, 4, 6});
    ValueId r = b.Node("Reshape", {x, b.Ints("grouped", {1, 3, 4, 4, 6})});
    ValueId t = b.Node("Transpose", {r}, {{"perm", Ints{0, 2, 1, 3, 4}}});
    b.Output(b.Node("Reshape", {t, b.Ints("back", {1, 12, 4, 6})}));
    b.Output(b.Node("Relu", {r}));
    refused(BuildOrFail(std::move(b)));
  }
  // A matrix, not an image.
  {
    GraphBuilder b("matrix");
    ValueId x = b.Input("x", DType::kFloat32, {4, 12});
    ValueId r = b.Node("Reshape", {x, b.Ints("grouped", {4, 3, 4})});
    ValueId t = b.Node("Transpose", {r}, {{"perm", Ints{0, 2, 1}}});
    b.Output(b.Node("Reshape", {t, b.Ints("back", {4, 12})}));
    refused(BuildOrFail(std::move(b)));
  }
}

// x [2, 10, 3, 4] sliced once on `axes` (empty: the input is omitted) from `starts` to `ends`.
Graph SliceGraph(const Ints& starts, const Ints& ends, const Ints& axes, const Ints& steps = {}) {
  GraphBuilder b("slice");
  ValueId x = b.Input("x", DType::kFloat32, {2, 10, 3, 4});
  std::vector<ValueId> inputs = {x, b.Ints("starts", starts), b.Ints("ends", ends)};
  if (!axes.empty()) inputs.push_back(b.Ints("axes", axes));
  if (!steps.empty()) inputs.push_back(b.Ints("steps", steps));
  b.Output(b.Node("Slice", inputs));
  return BuildOrFail(std::move(b));
}

TEST(OnednnChannelSlice, SliceWithNegativeAndClampedIndices) {
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 5}, {5, 10}, {-4, -1}, {-100, 3}, {7, 1000}, {3, INT64_MAX}, {-3, INT64_MAX}};
  for (const auto& [start, end] : ranges) {
    for (int64_t axis : {1, -3}) {
      SCOPED_TRACE(fmt::format("[{}, {}) on axis {}", start, end, axis));
      Graph graph = SliceGraph({start}, {end}, {axis}, {1});
      EXPECT_TRUE(Offers(CheckAllCandidates(graph, "onednn", 1e-6), "channel_slice"));
    }
  }
}

TEST(OnednnChannelSlice, OtherSlicesAreRefused) {
  auto refused = [](const Graph& graph) {
    EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_slice").empty());
    EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_slice_blocked").empty());
  };
  refused(SliceGraph({1}, {3}, {2}));           // height
  refused(SliceGraph({0}, {1}, {}));            // no axes: axis 0
  refused(SliceGraph({0, 1}, {2, 3}, {0, 1}));  // two axes
  refused(SliceGraph({0}, {10}, {1}, {2}));     // step 2
  refused(SliceGraph({9}, {0}, {1}, {-1}));     // reversed
}

Graph SplitGraph(int64_t opset, const Shape& shape, const Ints& sizes, int64_t axis) {
  GraphBuilder b("split", opset);
  ValueId x = b.Input("x", DType::kFloat32, shape);
  std::vector<ValueId> parts;
  const int num = static_cast<int>(sizes.size());
  if (opset < 13) {
    parts = b.NodeMulti("Split", {x}, num, {{"axis", axis}, {"split", sizes}});
  } else {
    parts = b.NodeMulti("Split", {x, b.Ints("split", sizes)}, num, {{"axis", axis}});
  }
  for (ValueId p : parts) b.Output(b.Node("Relu", {p}));
  return BuildOrFail(std::move(b));
}

TEST(OnednnChannelSlice, SplitSizesFromAttributeOrInput) {
  for (int64_t opset : {11, 13, 17}) {
    for (const Ints& sizes : {Ints{5, 5}, Ints{2, 7, 1}, Ints{58, 58}, Ints{16, 32, 68}}) {
      int64_t c = 0;
      for (int64_t s : sizes) c += s;
      SCOPED_TRACE(fmt::format("opset {} sizes {}", opset, fmt::join(sizes, ",")));
      Graph graph = SplitGraph(opset, {2, c, 5, 3}, sizes, 1);
      auto offered = CheckAllCandidates(graph, "onednn", 1e-6);
      EXPECT_TRUE(Offers(offered, "channel_slice"));
      ExpectRuleMatches(graph, "onednn", "channel_slice", 1);
    }
  }
}

TEST(OnednnChannelSlice, SplitsOnOtherAxesAreRefused) {
  Graph graph = SplitGraph(13, {2, 6, 4, 3}, {2, 2}, 2);
  EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_slice").empty());
  graph = SplitGraph(13, {6, 4, 3, 3}, {3, 3}, 0);
  EXPECT_TRUE(CandidatesOf(graph, "onednn", "channel_slice").empty());
}

TEST(OnednnChannelSlice, BlockedVariantMatchesReferenceWhereOffered) {
  // ShuffleNet v2's split of 232 channels in halves and one across any channel block:
  // offered where the blocked format takes the cut (channels-last takes any).
  for (const Ints& sizes : {Ints{116, 116}, Ints{32, 64}, Ints{5, 27}}) {
    int64_t c = 0;
    for (int64_t s : sizes) c += s;
    Graph graph = SplitGraph(13, {1, c, 14, 14}, sizes, 1);
    for (const Candidate& cand : CandidatesOf(graph, "onednn", "channel_slice_blocked")) {
      ExpectCandidateMatches(graph, "onednn", cand, 1e-6);
    }
  }
  // Whole 16-channel blocks: every blocked format oneDNN picks takes them.
  EXPECT_TRUE(
      RuleOffers(SplitGraph(13, {1, 96, 14, 14}, {32, 64}, 1), "onednn", "channel_slice_blocked"));
}

}  // namespace
}  // namespace collage::testing
