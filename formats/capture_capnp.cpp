// Cap'n Proto form of a capture: magic, then one flat message of per-phase parallel lists.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fcntl.h>
#include <kj/exception.h>
#include <kj/io.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "formats/capture.capnp.h"
#include "formats/capture.hpp"
#include "io/atomic_file.hpp"
#include "io/capnp_words.hpp"
#include "io/errors.hpp"
#include "io/utf8.hpp"

namespace lockstep::arch {
namespace {

// Words the message will need, so the builder allocates one segment and never copies.
uint64_t estimate_words(const Capture& capture) {
  uint64_t words = 64;
  for (const auto& phase : capture.phases) {
    uint64_t addresses = 0;
    uint64_t destinations = 0;
    for (const auto& t : phase.transfers) {
      addresses += t.source_addresses.size();
      destinations += t.destinations.size();
    }
    const uint64_t n = phase.transfers.size();
    words += 32 + (phase.label.size() + phase.operation.size()) / 8;
    words += (n * 4 * 3 + addresses * 4 + destinations * 8 + n / 8) / 8 + 16;
  }
  return words;
}

void fill_phase(const CapturePhase& phase, capture_schema::Phase::Builder out) {
  out.setId(phase.id);
  out.setLabel(phase.label);
  out.setExecutionCount(phase.execution_count);
  out.setOperation(phase.operation);
  out.setIterations(phase.iterations);
  const auto n = static_cast<unsigned>(phase.transfers.size());
  uint64_t addresses = 0;
  uint64_t destinations = 0;
  for (const auto& t : phase.transfers) {
    addresses += t.source_addresses.size();
    destinations += t.destinations.size();
  }
  auto tiles = out.initSourceTiles(n);
  auto words = out.initWords(n);
  auto paired = out.initAllowPaired(n);
  auto source_addresses = out.initSourceAddresses(static_cast<unsigned>(addresses));
  auto start = out.initDestinationStart(n + 1);
  auto dest_tiles = out.initDestinationTiles(static_cast<unsigned>(destinations));
  auto dest_addresses = out.initDestinationAddresses(static_cast<unsigned>(destinations));
  unsigned a = 0;
  unsigned d = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Transfer& t = phase.transfers[i];
    tiles.set(i, t.source_tile);
    words.set(i, t.words);
    paired.set(i, t.allow_paired);
    for (uint32_t address : t.source_addresses) source_addresses.set(a++, address);
    start.set(i, d);
    for (const auto& dest : t.destinations) {
      dest_tiles.set(d, dest.tile);
      dest_addresses.set(d, dest.address);
      ++d;
    }
  }
  start.set(n, d);
}

[[noreturn]] void malformed(const std::string& file, const std::string& where, const std::string& what) {
  throw InputError(file + ": " + where + what);
}

// A Text field as a string, refused unless it is well-formed UTF-8 (labels and names end up
// in JSON and HTML, which cannot carry anything else).
std::string text_field(capnp::Text::Reader text, const std::string& file, const std::string& where,
                       const std::string& field) {
  std::string out(text.cStr(), text.size());
  if (const auto bad = first_invalid_utf8(out)) {
    malformed(file, where, field + ": invalid UTF-8 at byte " + std::to_string(*bad));
  }
  return out;
}

// Every list is read once and every count, offset and size is checked against the lists it
// indexes before anything is allocated or indexed.
CapturePhase read_phase(capture_schema::Phase::Reader in, size_t index, const std::string& file) {
  CapturePhase phase;
  phase.id = in.getId();
  const std::string where = "phase " + std::to_string(phase.id) + " (index " + std::to_string(index) + "): ";
  phase.label = text_field(in.getLabel(), file, where, "label");
  phase.execution_count = in.getExecutionCount();
  phase.operation = text_field(in.getOperation(), file, where, "operation");
  phase.iterations = in.getIterations();
  const auto tiles = in.getSourceTiles();
  const auto words = in.getWords();
  const auto paired = in.getAllowPaired();
  const auto source_addresses = in.getSourceAddresses();
  const auto start = in.getDestinationStart();
  const auto dest_tiles = in.getDestinationTiles();
  const auto dest_addresses = in.getDestinationAddresses();
  const size_t n = tiles.size();
  if (phase.iterations == 0) malformed(file, where, "iterations: must be at least 1");
  if (words.size() != n) {
    malformed(file, where,
              "words: " + std::to_string(words.size()) + " entries, expected one per transfer (sourceTiles has " +
                  std::to_string(n) + ")");
  }
  if (paired.size() != n) {
    malformed(file, where,
              "allowPaired: " + std::to_string(paired.size()) +
                  " entries, expected one per transfer (sourceTiles has " + std::to_string(n) + ")");
  }
  if (source_addresses.size() != uint64_t{n} * phase.iterations) {
    malformed(file, where,
              "sourceAddresses: " + std::to_string(source_addresses.size()) +
                  " entries, expected transfers x iterations = " + std::to_string(uint64_t{n} * phase.iterations));
  }
  if (start.size() != n + 1) {
    malformed(file, where,
              "destinationStart: " + std::to_string(start.size()) +
                  " entries, expected transfers + 1 = " + std::to_string(n + 1));
  }
  const size_t destinations = dest_tiles.size();
  if (dest_addresses.size() != destinations) {
    malformed(file, where,
              "destinationAddresses: " + std::to_string(dest_addresses.size()) +
                  " entries, expected one per destination (destinationTiles has " + std::to_string(destinations) + ")");
  }
  if (start[0] != 0) {
    malformed(file, where, "destinationStart[0]: " + std::to_string(start[0]) + ", expected 0");
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t begin = start[static_cast<unsigned>(i)];
    const uint32_t end = start[static_cast<unsigned>(i + 1)];
    if (end < begin) {
      malformed(file, where,
                "destinationStart[" + std::to_string(i + 1) + "]: " + std::to_string(end) +
                    " is less than the entry before it (" + std::to_string(begin) + ")");
    }
    if (end > destinations) {
      malformed(file, where,
                "destinationStart[" + std::to_string(i + 1) + "]: " + std::to_string(end) + " is beyond the " +
                    std::to_string(destinations) + " destinations");
    }
  }
  if (start[static_cast<unsigned>(n)] != destinations) {
    malformed(file, where,
              "destinationStart[" + std::to_string(n) + "]: " + std::to_string(start[static_cast<unsigned>(n)]) +
                  ", expected the destination count " + std::to_string(destinations));
  }
  // Every count and offset is now known to lie inside the lists: sizes below come from them.
  phase.transfers.resize(n);
  unsigned a = 0;
  for (unsigned i = 0; i < n; ++i) {
    Transfer& t = phase.transfers[i];
    t.source_tile = tiles[i];
    t.words = words[i];
    t.allow_paired = paired[i];
    t.source_addresses.resize(phase.iterations);
    for (uint32_t k = 0; k < phase.iterations; ++k) t.source_addresses[k] = source_addresses[a++];
    const uint32_t begin = start[i];
    const uint32_t end = start[i + 1];
    t.destinations.resize(end - begin);
    for (uint32_t k = begin; k < end; ++k) {
      t.destinations[k - begin] = Destination{dest_tiles[k], dest_addresses[k]};
    }
  }
  return phase;
}

}  // namespace

Capture parse_capture_capnp(const uint8_t* data, size_t size, const std::string& file_name,
                            std::optional<uint32_t> only_phase) {
  constexpr size_t kMagicBytes = sizeof(kCaptureMagic) - 1;
  if (size < kMagicBytes || std::memcmp(data, kCaptureMagic, 6) != 0) {
    throw InputError(file_name + ": not a Lockstep capture (no LKSCAP magic)");
  }
  if (std::memcmp(data, kCaptureMagic, kMagicBytes) != 0) {
    std::string version;
    for (size_t i = 6; i < kMagicBytes; ++i) {
      const auto c = static_cast<char>(data[i]);
      version += c >= 0x20 && c < 0x7f ? std::string(1, c) : "?";
    }
    throw InputError(file_name + ": capture format version '" + version + "' is not supported (this build reads " +
                     std::string(kCaptureMagic + 6) + ")");
  }
  const uint8_t* body = data + kMagicBytes;
  const size_t body_size = size - kMagicBytes;
  kj::Array<capnp::word> copy;
  const kj::ArrayPtr<const capnp::word> words = capnp_message_words(body, body_size, copy, file_name, "capture");
  const size_t word_count = words.size();
  capnp::ReaderOptions options;
  // The reader fetches every list once, so an honest capture is read within its own size
  // (word_count); twice that, plus room for the small headers, bounds what a hostile file
  // can make us read or allocate through lists shared by many pointers.
  options.traversalLimitInWords = 2 * word_count + 8192;
  options.nestingLimit = 16;  // Capture > List(Phase) > Phase > lists: depth 4 suffices
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    if (reader.getEnd() != words.end()) {
      throw InputError(file_name + ": corrupt capture: " + std::to_string(8 * (words.end() - reader.getEnd())) +
                       " bytes after the message");
    }
    const auto root = reader.getRoot<capture_schema::Capture>();
    Capture capture;
    capture.version = root.getVersion();
    if (capture.version != kCaptureVersion) {
      throw InputError(file_name + ": version: " + std::to_string(capture.version) +
                       " is not supported (this build reads " + std::to_string(kCaptureVersion) + ")");
    }
    capture.machine_name = text_field(root.getMachineName(), file_name, "", "machineName");
    const auto phases = root.getPhases();
    // A phase has iterations >= 1, so it takes at least one word of the file.
    if (phases.size() > word_count) {
      throw InputError(file_name + ": phases: " + std::to_string(phases.size()) +
                       " phases cannot fit in a message of " + std::to_string(word_count) + " words");
    }
    capture.phases.reserve(only_phase ? 1 : phases.size());
    for (unsigned i = 0; i < phases.size(); ++i) {
      if (only_phase && phases[i].getId() != *only_phase) continue;
      capture.phases.push_back(read_phase(phases[i], i, file_name));
    }
    if (only_phase) keep_only_phase(capture, *only_phase, phases.size(), file_name);
    return capture;
  } catch (const kj::Exception& e) {
    std::string what(e.getDescription().cStr());
    for (char& c : what) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    throw InputError(file_name + ": malformed Cap'n Proto capture: " + what);
  }
}

void write_capture_capnp(const Capture& capture, const std::string& path) {
  const uint64_t estimate = estimate_words(capture);
  capnp::MallocMessageBuilder message(static_cast<unsigned>(std::min<uint64_t>(estimate, (uint64_t{1} << 31) - 1)));
  auto root = message.initRoot<capture_schema::Capture>();
  root.setVersion(capture.version);
  root.setMachineName(capture.machine_name);
  auto phases = root.initPhases(static_cast<unsigned>(capture.phases.size()));
  for (size_t i = 0; i < capture.phases.size(); ++i) {
    fill_phase(capture.phases[i], phases[static_cast<unsigned>(i)]);
  }
  write_capnp_file(path, message, std::string_view(kCaptureMagic, sizeof(kCaptureMagic) - 1));
}

}  // namespace lockstep::arch
