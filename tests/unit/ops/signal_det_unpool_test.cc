// DFT, STFT, Det and MaxUnpool against values worked by hand, and their errors (the ONNX node
// cases check the spec's examples, MelWeightMatrix's included).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference_node_util.h"

namespace collage {
namespace {

using testing::ExpectError;
using testing::Floats;
using testing::Int64s;
using testing::MakeNode;
using testing::RunOne;
using testing::RunStatus;

TEST(DetTest, TheDeterminantOfEachMatrix) {
  // [[2, 0, 1], [1, 3, 2], [1, 1, 1]]: 2*(3-2) - 0 + 1*(1-3) = 0; then a row swap: -1.
  const Tensor x = Floats({2, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 1,  //
                                      0, 1, 0, 1, 0, 0, 0, 0, 1});
  const std::vector<float> det = RunOne(MakeNode("Det", 1), 11, {x}).ToVector<float>();
  ASSERT_EQ(det.size(), 2u);
  EXPECT_NEAR(det[0], 0.0f, 1e-6);
  EXPECT_EQ(det[1], -1.0f);
  ExpectError(RunStatus(MakeNode("Det", 1), 11, {Floats({2, 3}, std::vector<float>(6, 1))}),
              StatusCode::kInvalidModel, "square matrix");
}

TEST(DftTest, ARealSignalsSpectrumAndBack) {
  // x = [1, 2, 3, 4]: X = [10, -2+2i, -2, -2-2i].
  Node dft = MakeNode("DFT", 1);
  dft.attributes.Set("axis", int64_t{1});
  const Tensor spectrum = RunOne(dft, 17, {Floats({1, 4, 1}, {1, 2, 3, 4})});
  EXPECT_EQ(spectrum.shape(), (Shape{1, 4, 2}));
  const std::vector<float> want = {10, 0, -2, 2, -2, 0, -2, -2};
  const std::vector<float> got = spectrum.ToVector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  // Onesided: the first n/2 + 1 bins.
  dft.attributes.Set("onesided", int64_t{1});
  EXPECT_EQ(RunOne(dft, 17, {Floats({1, 4, 1}, {1, 2, 3, 4})}).shape(), (Shape{1, 3, 2}));
  // The inverse gives the signal back.
  Node inverse = MakeNode("DFT", 1);
  inverse.attributes.Set("inverse", int64_t{1});
  const std::vector<float> back = RunOne(inverse, 17, {spectrum}).ToVector<float>();
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_NEAR(back[2 * t], static_cast<float>(t + 1), 1e-5) << t;
    EXPECT_NEAR(back[2 * t + 1], 0.0f, 1e-5) << t;
  }
  ExpectError(RunStatus(dft, 17, {Floats({1, 4, 3}, std::vector<float>(12, 0))}),
              StatusCode::kInvalidModel, "1 (real) or 2 (complex)");
}

TEST(StftTest, FramesOfTheSignalAndTheirErrors) {
  // Frames of 4 every 2 samples of 8: 3 frames, 3 bins each (onesided).
  Node stft = MakeNode("STFT", 4);
  const Tensor signal = Floats({1, 8, 1}, {1, 1, 1, 1, 0, 0, 0, 0});
  const Tensor out =
      RunOne(stft, 17, {signal, Int64s({}, {2}), Tensor(), Int64s({}, {4})});
  EXPECT_EQ(out.shape(), (Shape{1, 3, 3, 2}));
  // The first frame is all ones: its DC bin is 4, the others 0.
  const std::vector<float> v = out.ToVector<float>();
  EXPECT_NEAR(v[0], 4.0f, 1e-5);
  EXPECT_NEAR(v[2], 0.0f, 1e-5);
  ExpectError(RunStatus(stft, 17, {signal, Int64s({}, {2}), Tensor(), Int64s({}, {9})}),
              StatusCode::kInvalidModel, "no longer than the signal");
}

TEST(MaxUnpoolTest, ValuesGoWhereTheirIndicesSayAndBadIndicesAreRefused) {
  Node unpool = MakeNode("MaxUnpool", 2);
  unpool.attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  unpool.attributes.Set("strides", std::vector<int64_t>{2, 2});
  const Tensor x = Floats({1, 1, 1, 2}, {5, 6});
  const Tensor out = RunOne(unpool, 11, {x, Int64s({1, 1, 1, 2}, {1, 6})});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 2, 4}));
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{0, 5, 0, 0, 0, 0, 6, 0}));
  ExpectError(RunStatus(unpool, 11, {x, Int64s({1, 1, 1, 2}, {1, 8})}),
              StatusCode::kInvalidArgument, "index 8 (at position 1) is outside the 8 elements");
}

}  // namespace
}  // namespace collage
