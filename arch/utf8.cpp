#include "arch/utf8.hpp"

#include <algorithm>
#include <cstdint>

namespace lockstep::arch {

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint8_t low = 0x80, high = 0xbf;  // allowed range of the second byte
    if (b >= 0xc2 && b <= 0xdf) {
      length = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b == 0xe0) low = 0xa0;   // overlong
      if (b == 0xed) high = 0x9f;  // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b == 0xf0) low = 0x90;   // overlong
      if (b == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + length > n) return i;
    if (s[i + 1] < low || s[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xbf) return i;
    }
    i += length;
  }
  return std::nullopt;
}

size_t line_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

}  // namespace lockstep::arch
