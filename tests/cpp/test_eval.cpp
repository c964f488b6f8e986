// Evaluation: fusion, dead-code elimination, graph collapse, side-effect order, caching.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/verify.h"

using namespace kiln;

TEST(Eval, FusedArithmetic) {
  Float x = linspace<Float>(0.f, 1.f, 1000);
  Float y = x * 2.f + 1.f;
  EXPECT_FLOAT_EQ(y.read(999), 3.f);
  EXPECT_FLOAT_EQ(y.read(0), 1.f);
  EXPECT_EQ(detail::verify_ir(), "");
}
