// Cap'n Proto form of a capture: magic, then one flat message of per-phase parallel lists.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <kj/exception.h>
#include <kj/io.h>

#include "arch/capture.capnp.h"
#include "arch/capture.hpp"
#include "arch/atomic_file.hpp"
#include "arch/errors.hpp"

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

void fill_phase(const CapturePhase& phase, schema::Phase::Builder out) {
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

[[noreturn]] void malformed(const std::string& file, const std::string& where,
                            const std::string& what) {
  throw InputError(file + ": " + where + what);
}

CapturePhase read_phase(schema::Phase::Reader in, size_t index, const std::string& file) {
  CapturePhase phase;
  phase.id = in.getId();
  phase.label = in.getLabel();
  phase.execution_count = in.getExecutionCount();
  phase.operation = in.getOperation();
  phase.iterations = in.getIterations();
  const std::string where = "phase " + std::to_string(phase.id) + " (index " +
                            std::to_string(index) + "): ";
  const auto tiles = in.getSourceTiles();
  const auto words = in.getWords();
  const auto paired = in.getAllowPaired();
  const auto source_addresses = in.getSourceAddresses();
  const auto start = in.getDestinationStart();
  const auto dest_tiles = in.getDestinationTiles();
  const auto dest_addresses = in.getDestinationAddresses();
  const size_t n = tiles.size();
  if (phase.iterations == 0) malformed(file, where, "iterations: must be at least 1");
  if (words.size() != n || paired.size() != n) {
    malformed(file, where, "words/allowPaired: length differs from sourceTiles (" +
                               std::to_string(n) + ")");
  }
  if (source_addresses.size() != uint64_t{n} * phase.iterations) {
    malformed(file, where, "sourceAddresses: " + std::to_string(source_addresses.size()) +
                               " entries, expected transfers x iterations = " +
                               std::to_string(uint64_t{n} * phase.iterations));
  }
  if (start.size() != n + 1) {
    malformed(file, where, "destinationStart: " + std::to_string(start.size()) +
                               " entries, expected transfers + 1 = " + std::to_string(n + 1));
  }
  if (dest_addresses.size() != dest_tiles.size()) {
    malformed(file, where, "destinationAddresses: length differs from destinationTiles");
  }
  if (start[0] != 0 || start[n] != dest_tiles.size()) {
    malformed(file, where, "destinationStart: must run from 0 to the destination count");
  }
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
    if (end < begin) {
      malformed(file, where, "transfer " + std::to_string(i) + ": destinationStart decreases");
    }
    t.destinations.resize(end - begin);
    for (uint32_t k = begin; k < end; ++k) {
      t.destinations[k - begin] = Destination{dest_tiles[k], dest_addresses[k]};
    }
  }
  return phase;
}

}  // namespace

Capture parse_capture_capnp(const uint8_t* data, size_t size, const std::string& file_name) {
  constexpr size_t kMagicBytes = sizeof(kCaptureMagic) - 1;
  if (size < kMagicBytes || std::memcmp(data, kCaptureMagic, 6) != 0) {
    throw InputError(file_name + ": not a Lockstep capture (no LKSCAP magic)");
  }
  if (std::memcmp(data, kCaptureMagic, kMagicBytes) != 0) {
    throw InputError(file_name + ": capture format version '" +
                     std::string(reinterpret_cast<const char*>(data) + 6, 2) +
                     "' is not supported (this build reads " + std::string(kCaptureMagic + 6) +
                     ")");
  }
  const uint8_t* body = data + kMagicBytes;
  const size_t body_size = size - kMagicBytes;
  if (body_size % sizeof(capnp::word) != 0) {
    throw InputError(file_name + ": truncated capture (message is not whole words)");
  }
  // mmap'd data is page aligned, so the body is word aligned; copy only if someone hands
  // us an unaligned buffer.
  kj::Array<capnp::word> aligned;
  kj::ArrayPtr<const capnp::word> words;
  if (reinterpret_cast<uintptr_t>(body) % alignof(capnp::word) != 0) {
    aligned = kj::heapArray<capnp::word>(body_size / sizeof(capnp::word));
    std::memcpy(aligned.begin(), body, body_size);
    words = aligned.asPtr();
  } else {
    words = kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(body),
                                            body_size / sizeof(capnp::word));
  }
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = uint64_t{1} << 62;  // the file's own size bounds it
    capnp::FlatArrayMessageReader reader(words, options);
    const auto root = reader.getRoot<schema::Capture>();
    Capture capture;
    capture.version = root.getVersion();
    if (capture.version != kCaptureVersion) {
      throw InputError(file_name + ": version: " + std::to_string(capture.version) +
                       " is not supported (this build reads " + std::to_string(kCaptureVersion) +
                       ")");
    }
    capture.machine_name = root.getMachineName();
    const auto phases = root.getPhases();
    capture.phases.reserve(phases.size());
    for (unsigned i = 0; i < phases.size(); ++i) {
      capture.phases.push_back(read_phase(phases[i], i, file_name));
    }
    return capture;
  } catch (const kj::Exception& e) {
    throw InputError(file_name + ": malformed Cap'n Proto capture: " +
                     std::string(e.getDescription().cStr()));
  }
}

void write_capture_capnp(const Capture& capture, const std::string& path) {
  const uint64_t estimate = estimate_words(capture);
  capnp::MallocMessageBuilder message(
      static_cast<unsigned>(std::min<uint64_t>(estimate, (uint64_t{1} << 31) - 1)));
  auto root = message.initRoot<schema::Capture>();
  root.setVersion(capture.version);
  root.setMachineName(capture.machine_name);
  auto phases = root.initPhases(static_cast<unsigned>(capture.phases.size()));
  for (size_t i = 0; i < capture.phases.size(); ++i) {
    fill_phase(capture.phases[i], phases[static_cast<unsigned>(i)]);
  }
  write_file_atomically(path, [&](int fd) {
    try {
      kj::FdOutputStream stream(fd);
      stream.write(kCaptureMagic, sizeof(kCaptureMagic) - 1);
      capnp::writeMessage(stream, message);
    } catch (const kj::Exception& e) {
      throw std::runtime_error(e.getDescription().cStr());
    }
  });
}

}  // namespace lockstep::arch
