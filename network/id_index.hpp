// Element IDs to indices (Network::node_index, link_index). Reading a network looks IDs up once
// or twice a record (every link names two nodes, every demand, control and coordinate one): with
// std::unordered_map that was 12% of reading a 250,000-junction network (a heap node per ID, two
// dependent loads a lookup). Here: open addressing over one array of 16-byte slots, the IDs'
// characters in one arena, so a lookup is one slot line and one arena line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cgs::net {

class IdIndex {
 public:
  void reserve(std::size_t ids);
  // The index stored under `id`, -1 if none.
  int find(std::string_view id) const;
  // Stores `index` under `id`; false (nothing changed) where `id` is there already.
  bool insert(std::string_view id, int index);
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::int32_t index = -1;   // -1: empty
    std::uint32_t offset = 0;  // of the ID in chars_
    std::uint32_t length = 0;
  };
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::string chars_;
  std::size_t size_ = 0;

  std::size_t probe(std::string_view id, std::uint64_t hash) const;  // its slot or an empty one
  void rehash(std::size_t slot_count);
};

}  // namespace cgs::net
