#include "network/id_index.hpp"

#include <bit>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace cgs::net {

void IdIndex::reserve(std::size_t ids) {
  if (2 * ids > slots_.size()) rehash(std::bit_ceil(std::max<std::size_t>(2 * ids, 16)));
}

std::size_t IdIndex::probe(std::string_view id, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index < 0) return i;
    if (s.hash == tag && s.length == id.size() &&
        std::memcmp(chars_.data() + s.offset, id.data(), id.size()) == 0)
      return i;
  }
}

int IdIndex::find(std::string_view id) const {
  if (size_ == 0) return -1;
  return slots_[probe(id, std::hash<std::string_view>{}(id))].index;
}

bool IdIndex::insert(std::string_view id, int index) {
  if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
  const std::uint64_t hash = std::hash<std::string_view>{}(id);
  Slot& s = slots_[probe(id, hash)];
  if (s.index >= 0) return false;
  if (chars_.size() + id.size() > UINT32_MAX) throw std::length_error("IdIndex: over 4 GB of IDs");
  s = {static_cast<std::uint32_t>(hash >> 32), index, static_cast<std::uint32_t>(chars_.size()),
       static_cast<std::uint32_t>(id.size())};
  chars_.append(id);
  ++size_;
  return true;
}

void IdIndex::rehash(std::size_t slot_count) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slot_count, Slot{});
  const std::size_t mask = slot_count - 1;
  for (const Slot& s : old) {
    if (s.index < 0) continue;
    const std::string_view id(chars_.data() + s.offset, s.length);
    std::size_t i = std::hash<std::string_view>{}(id)&mask;
    while (slots_[i].index >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace cgs::net
