#include <gtest/gtest.h>

#include "collage/status.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("{} is odd", x);
  return x / 2;
}

Status UseHalf(int x, int* out) {
  COLLAGE_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::Ok();
}

TEST(StatusTest, CarriesCodeAndMessage) {
  Status s = Unsupported("op {} is not supported", "Foo");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.ToString(), "unsupported: op Foo is not supported");
  EXPECT_EQ(s.WithContext("model.onnx").message(), "model.onnx: op Foo is not supported");
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status s = UseHalf(3, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "3 is odd");
}

}  // namespace
}  // namespace collage
