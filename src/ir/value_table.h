// The value-numbering table: node key -> index of the live pure node with that key.
// Open addressing with linear probing and backward-shift deletion, in one flat array:
// tracing inserts and removes one entry per pure node, and a node-based hash map paid an
// allocation and a pointer chase for each.
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::detail {

/// Key of a pure node for value numbering.
struct NodeKey {
  Op op;
  VarType type;
  Index operands[4];
  uint64_t literal;
  size_t size;
  bool operator==(const NodeKey&) const = default;
};

/// A multiply-xorshift mix of the key's five words, inline: tracing hashes every pure node
/// twice (create, forget). Keys are zeroed before they are filled, so padding is zero.
struct NodeKeyHash {
  size_t operator()(const NodeKey& key) const {
    static_assert(sizeof(NodeKey) == 40, "NodeKeyHash mixes five 64-bit words");
    uint64_t words[5];
    std::memcpy(words, &key, sizeof(words));
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : words) {
      h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
    }
    return size_t(h);
  }
};

class ValueTable {
 public:
  /// The node with this key, or 0 when there is none.
  Index find(const NodeKey& key) const {
    if (slots_.empty()) return 0;
    for (size_t i = home(hash_(key)); slots_[i].index; i = (i + 1) & mask_)
      if (slots_[i].key == key) return slots_[i].index;
    return 0;
  }

  /// Adds key -> index; the key must not be in the table.
  void insert(const NodeKey& key, Index index) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    place({key, index, hash_(key)});
    ++count_;
  }

  /// Removes the key if it maps to `index`.
  void erase(const NodeKey& key, Index index) {
    if (slots_.empty()) return;
    size_t i = home(hash_(key));
    while (slots_[i].index && !(slots_[i].index == index && slots_[i].key == key)) i = (i + 1) & mask_;
    if (!slots_[i].index) return;
    // Backward shift: move later entries of the run into the hole unless that would put
    // them before their home slot.
    for (size_t j = (i + 1) & mask_; slots_[j].index; j = (j + 1) & mask_) {
      size_t h = home(slots_[j].hash);
      bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (!movable) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].index = 0;
    --count_;
  }

 private:
  struct Slot {
    NodeKey key;
    Index index = 0;  ///< 0: empty
    size_t hash = 0;
  };

  size_t home(size_t hash) const { return hash & mask_; }

  void place(const Slot& slot) {
    size_t i = home(slot.hash);
    while (slots_[i].index) i = (i + 1) & mask_;
    slots_[i] = slot;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old)
      if (slot.index) place(slot);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, count_ = 0;
  NodeKeyHash hash_;
};

}  // namespace kiln::detail
