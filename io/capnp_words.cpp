#include "io/capnp_words.hpp"

#include <capnp/serialize.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/errors.hpp"

namespace lockstep::arch {

kj::ArrayPtr<const capnp::word> capnp_message_words(const uint8_t* body, size_t size, kj::Array<capnp::word>& copy,
                                                    const std::string& file, const std::string& kind) {
  // A message starts with its segment count, a little-endian word whose high bytes are zero;
  // text never holds a NUL, so a text file (a YAML package, JSON, a log) is named as such.
  const size_t head = std::min<size_t>(size, 256);
  if (size > 0 && std::memchr(body, 0, head) == nullptr) {
    // Text: printable ASCII, whitespace or UTF-8's high bytes; anything else is binary noise.
    const bool text = std::all_of(
        body, body + head, [](uint8_t c) { return c >= 0x20 ? c != 0x7f : (c == '\t' || c == '\n' || c == '\r'); });
    throw InputError(file + (text ? ": is a text file, not a " : ": is not a ") + kind +
                     " (a binary Cap'n Proto message starts with its segment count, whose high bytes are zero)");
  }
  if (size < sizeof(capnp::word) || size % sizeof(capnp::word) != 0) {
    throw InputError(file + ": truncated " + kind + ": the message is " + std::to_string(size) +
                     " bytes, not a positive multiple of 8");
  }
  const size_t word_count = size / sizeof(capnp::word);
  kj::ArrayPtr<const capnp::word> words;
  if (reinterpret_cast<uintptr_t>(body) % alignof(capnp::word) == 0) {
    words = kj::arrayPtr(reinterpret_cast<const capnp::word*>(body), word_count);
  } else {
    copy = kj::heapArray<capnp::word>(word_count);
    std::memcpy(copy.begin(), body, size);
    words = copy.asPtr();
  }
  // The first word holds (segments - 1); the table is 1 + segments 32-bit sizes, and must
  // fit before FlatArrayMessageReader looks at the segments.
  const uint32_t segment_count = static_cast<uint32_t>(body[0]) | static_cast<uint32_t>(body[1]) << 8 |
                                 static_cast<uint32_t>(body[2]) << 16 | static_cast<uint32_t>(body[3]) << 24;
  const uint64_t table_words = (static_cast<uint64_t>(segment_count) + 3) / 2;
  if (segment_count >= 512 || table_words > word_count) {
    throw InputError(file + ": truncated or corrupt " + kind + ": segment table of " +
                     std::to_string(static_cast<uint64_t>(segment_count) + 1) + " segments does not fit in " +
                     std::to_string(word_count) + " words");
  }
  return words;
}

void write_capnp_file(const std::string& path, capnp::MessageBuilder& message, std::string_view magic) {
  write_file_atomically(path, [&](int fd) {
    try {
      kj::FdOutputStream stream(fd);
      if (!magic.empty()) stream.write(magic.data(), magic.size());
      capnp::writeMessage(stream, message);
    } catch (const kj::Exception& e) {
      throw std::runtime_error(e.getDescription().cStr());
    }
  });
}

}  // namespace lockstep::arch
