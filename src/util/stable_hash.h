// FNV-1a, 64-bit: unlike std::hash, the same value for the same text on every standard
// library and platform, so what is derived from it (the zoo's weights, a backend's colour in
// the report) never changes between builds.
#pragma once

#include <cstdint>
#include <string_view>

namespace collage {

inline uint64_t StableHash(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

}  // namespace collage
