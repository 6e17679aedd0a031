#pragma once
// The words of a flat Cap'n Proto message that follows a file's magic, checked before any
// reader looks at them: a positive multiple of 8 bytes, and a segment table that fits.
// Shared by the package and capture readers.
#include <capnp/common.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace lockstep::arch {

// `body` is read in place when word-aligned (a mapped file is), else copied into `copy`.
// InputError "file: truncated KIND: ..." / "file: truncated or corrupt KIND: segment table ...".
kj::ArrayPtr<const capnp::word> capnp_message_words(const uint8_t* body, size_t size, kj::Array<capnp::word>& copy,
                                                    const std::string& file, const std::string& kind);

}  // namespace lockstep::arch
