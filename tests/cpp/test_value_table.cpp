// The value-numbering table against std::unordered_map under random inserts and erases
// (including long probe runs that wrap around the end of the array).
#include "ir/value_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

using namespace kiln;
using namespace kiln::detail;

namespace {
NodeKey key(uint32_t a, uint32_t b) {
  NodeKey k;
  std::memset(&k, 0, sizeof(k));
  k.op = Op::Add;
  k.type = VarType::Float32;
  k.operands[0] = a;
  k.operands[1] = b;
  k.size = 16;
  return k;
}
}  // namespace

TEST(ValueTable, MatchesAHashMapUnderRandomInsertsAndErases) {
  ValueTable table;
  std::unordered_map<NodeKey, Index, NodeKeyHash> reference;
  std::mt19937 random(7);
  Index next = 1;
  for (int step = 0; step < 200000; ++step) {
    NodeKey k = key(random() % 3000, random() % 4);
    auto it = reference.find(k);
    ASSERT_EQ(table.find(k), it == reference.end() ? 0 : it->second) << step;
    if (it == reference.end()) {
      table.insert(k, next);
      reference.emplace(k, next++);
    } else if (random() % 2) {
      table.erase(k, it->second + 1);  // another node's index: nothing happens
      ASSERT_EQ(table.find(k), it->second);
      table.erase(k, it->second);
      reference.erase(it);
      ASSERT_EQ(table.find(k), 0u);
    }
  }
  for (const auto& [k, index] : reference) EXPECT_EQ(table.find(k), index);
}
