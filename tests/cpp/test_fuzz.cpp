// Placeholder until the fuzz tests land.
#include <gtest/gtest.h>
TEST(fuzz, Builds) {}
