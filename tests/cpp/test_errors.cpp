#include <gtest/gtest.h>
TEST(errors, Builds) {}
