// Placeholder until the vector tests land.
#include <gtest/gtest.h>
TEST(vector, Builds) {}
