// Placeholder until the random tests land.
#include <gtest/gtest.h>
TEST(random, Builds) {}
