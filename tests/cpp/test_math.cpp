// Placeholder until the math tests land.
#include <gtest/gtest.h>
TEST(math, Builds) {}
