#include "io/utf8.hpp"

#include <algorithm>
#include <cstdint>

namespace lockstep::arch {

size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t b = s[at];
  if (b < 0x80) return 1;
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
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (s[at + 1] < low || s[at + 1] > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (s[at + k] < 0x80 || s[at + k] > 0xbf) return 0;
  }
  return length;
}

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

size_t line_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

}  // namespace lockstep::arch
