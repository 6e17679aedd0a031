#pragma once
// UTF-8 validation for the readers: text from a file (YAML documents, Cap'n Proto Text
// fields) must be well-formed UTF-8, so that nothing downstream (JSON output, reports)
// meets bytes it cannot encode after the work is done.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lockstep::arch {

// The byte offset of the first byte that does not start a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF included); nullopt if all
// of `text` is well-formed.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// The length of the well-formed UTF-8 sequence starting at byte `at` (1 for ASCII), or 0
// if none starts there (a stray continuation byte, an overlong form, a surrogate, a code
// point above U+10FFFF, or a sequence cut short).
size_t utf8_sequence_length(std::string_view text, size_t at);

// 1-based line number of byte `offset` in `text` (lines end at '\n').
size_t line_of_offset(std::string_view text, size_t offset);

}  // namespace lockstep::arch
