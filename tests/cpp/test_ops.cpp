#include <gtest/gtest.h>
TEST(ops, Builds) {}
