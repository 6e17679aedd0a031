#pragma once
// The words of a flat Cap'n Proto message that follows a file's magic, checked before any
// reader looks at them: a positive multiple of 8 bytes, and a segment table that fits.
// Shared by the package and capture readers; the writer every Cap'n Proto file uses, and the
// words a message needs.
#include <capnp/common.h>
#include <capnp/message.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::arch {

// `body` is read in place when word-aligned (a mapped file is), else copied into `copy`.
// InputError "file: truncated KIND: ..." / "file: truncated or corrupt KIND: segment table ...".
kj::ArrayPtr<const capnp::word> capnp_message_words(const uint8_t* body, size_t size, kj::Array<capnp::word>& copy,
                                                    const std::string& file, const std::string& kind);

// Words a message gives a Text (its NUL included), and a list of `n` structs `S` (a generated
// schema type), its tag word included: for sizing a builder's first segment ahead.
inline size_t capnp_text_words(std::string_view text) { return text.size() / 8 + 1; }
template <typename S>
size_t capnp_struct_list_words(size_t n) {
  return 1 + n * (S::_capnpPrivate::dataWordSize + S::_capnpPrivate::pointerCount);
}

// Writes `magic` then the message to `path` atomically (io/atomic_file.hpp): the one
// writer of the package, capture, profile and device image files.
void write_capnp_file(const std::string& path, capnp::MessageBuilder& message, std::string_view magic = {});

}  // namespace lockstep::arch
