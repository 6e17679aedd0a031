#include "io/printable.hpp"

#include <algorithm>
#include <cstdio>

#include "io/utf8.hpp"

namespace lockstep {

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&out](char c) {
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
    out += escaped;
  };
  for (size_t i = 0; i < text.size();) {
    const size_t length = arch::utf8_sequence_length(text, i);
    const auto byte = static_cast<unsigned char>(text[i]);
    // C0 controls and DEL; C1 controls (U+0080..U+009F, such as the 8-bit CSI) are 0xc2 0x80..0x9f.
    const bool control =
        byte < 0x20 || byte == 0x7f || (length == 2 && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f);
    if (length == 0 || control) {
      for (size_t k = 0; k < std::max<size_t>(length, 1); ++k) escape(text[i + k]);
      i += std::max<size_t>(length, 1);
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace lockstep
