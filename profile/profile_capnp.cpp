// Reading and writing profiles: one flat Cap'n Proto message, root Profile (profile/profile.capnp).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/capnp_words.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/utf8.hpp"
#include "profile/profile.capnp.h"
#include "profile/profile.hpp"

namespace lockstep::arch {
namespace {

[[noreturn]] void malformed(const std::string& file, const std::string& where, const std::string& what) {
  throw InputError(file + ": " + where + what);
}

std::string text_field(capnp::Text::Reader text, const std::string& file, const std::string& where, const char* field) {
  std::string out(text.cStr(), text.size());
  if (const auto bad = first_invalid_utf8(out)) {
    malformed(file, where, std::string(field) + ": invalid UTF-8 at byte " + std::to_string(*bad));
  }
  return out;
}

ProfileStep read_step(profile_schema::Step::Reader in, const std::string& file, const std::string& where) {
  ProfileStep step;
  step.local_index = in.getLocalIndex();
  step.phase = in.getPhase();
  step.operation = text_field(in.getOperation(), file, where, "operation");
  const auto kind = static_cast<uint16_t>(in.getKind());
  if (kind > 3) malformed(file, where, "kind: " + std::to_string(kind) + " is not a step kind (0..3)");
  step.kind = static_cast<ProfileStepKind>(kind);
  step.kernel = text_field(in.getKernel(), file, where, "kernel");
  for (auto m : in.getMetadata()) {
    step.metadata.push_back({text_field(m.getName(), file, where, "metadata name"),
                             text_field(m.getValue(), file, where, "metadata value")});
  }
  for (auto a : in.getExchangeActivities()) {
    const auto activity = static_cast<uint16_t>(a.getKind());
    if (activity > 2) {
      malformed(file, where,
                "exchangeActivities: kind " + std::to_string(activity) + " is not an activity kind (0..2)");
    }
    if (a.getEndCycle() < a.getStartCycle()) {
      malformed(file, where,
                "exchangeActivities: ends (" + std::to_string(a.getEndCycle()) + ") before it starts (" +
                    std::to_string(a.getStartCycle()) + ")");
    }
    step.activities.push_back({static_cast<ActivityKind>(activity), a.getStartCycle(), a.getEndCycle()});
  }
  step.event_cycles = in.getExchangeEventCycles();
  step.phase_label = text_field(in.getPhaseLabel(), file, where, "phaseLabel");
  return step;
}

// The longest sample a profile holds: on disk a sample is its start and its end's low 32
// bits, so its length is the wrapping difference; a difference of 2^31 or more reads as an
// end before the start (docs/profiles.md "Cycles"), in both kinds of profile.
constexpr uint64_t kMaxSampleCycles = (uint64_t{1} << 31) - 1;

uint32_t sample_cycles(profile_schema::CycleSample::Reader s, const std::string& file, const std::string& where) {
  const uint32_t duration = s.getEndCycle() - s.getStartCycle();
  if (duration > kMaxSampleCycles) {
    malformed(file, where,
              "endCycle " + std::to_string(s.getEndCycle()) + " is before startCycle " +
                  std::to_string(s.getStartCycle()) + " (read as a wrap of the 32-bit counter it " + "would last " +
                  std::to_string(duration) + " cycles, over 2^31)");
  }
  return duration;
}

// Each tile's physical id once: a second one is refused naming both. `seen` maps the ids
// met so far to their index in the file's tiles.
void refuse_repeated_tile(std::map<uint32_t, size_t>& seen, uint32_t physical, size_t index, const std::string& file) {
  const auto [it, fresh] = seen.emplace(physical, index);
  if (!fresh) {
    malformed(
        file, "tiles[" + std::to_string(index) + "]: ",
        "physicalTile " + std::to_string(physical) + " appears twice (also tiles[" + std::to_string(it->second) + "])");
  }
}

// A stack profile's cycles are a free-running 32-bit counter: each start is taken as the
// signed (wrapping) distance from the first tile's first sample, then all are shifted so
// the earliest is 0. Lockstep profiles carry the high bits and read as written.
void read_tiles(profile_schema::Profile::Reader root, Profile& profile, const std::string& file) {
  const bool lockstep = profile.lockstep_version > 0;
  const auto tiles = root.getTiles();
  uint32_t reference = 0;
  if (tiles.size() > 0 && tiles[0].getSamples().size() > 0) reference = tiles[0].getSamples()[0].getStartCycle();
  int64_t earliest = 0;
  const auto table_steps = root.getSteps();
  for (unsigned i = 0; i < table_steps.size(); ++i) {
    profile.steps.push_back(read_step(table_steps[i], file, "steps[" + std::to_string(i) + "]: "));
  }
  const size_t shared = profile.steps.size();
  ProfileStepTable table(profile.steps);
  profile.tiles.reserve(tiles.size());
  std::map<uint32_t, size_t> seen;
  for (unsigned t = 0; t < tiles.size(); ++t) {
    const auto in = tiles[t];
    TileProfile tile;
    tile.physical_tile = in.getPhysicalTile();
    refuse_repeated_tile(seen, tile.physical_tile, t, file);
    tile.logical_tile = in.getLogicalTile();
    const auto samples = in.getSamples();
    tile.samples.reserve(samples.size());
    for (unsigned i = 0; i < samples.size(); ++i) {
      const auto s = samples[i];
      const std::string where = "tile " + std::to_string(tile.physical_tile) + " sample " + std::to_string(i) + ": ";
      CycleSample sample;
      const uint32_t duration = sample_cycles(s, file, where);
      int64_t start = 0;
      if (lockstep) {
        start = static_cast<int64_t>((uint64_t{s.getStartCycleHigh()} << 32) | s.getStartCycle());
      } else {
        start = static_cast<int32_t>(s.getStartCycle() - reference);
        earliest = std::min(earliest, start);
      }
      sample.start_cycle = static_cast<uint64_t>(start);
      sample.end_cycle = sample.start_cycle + duration;
      if (s.getStepIndex() > 0) {  // compact layout
        if (s.getStepIndex() > shared) {
          malformed(
              file, where,
              "stepIndex: " + std::to_string(s.getStepIndex()) + " is beyond the " + std::to_string(shared) + " steps");
        }
        sample.step = s.getStepIndex() - 1;
        sample.epoch = s.getEpoch();
        sample.invocation = s.getInvocation();
      } else {
        const auto step = s.getStep();
        sample.epoch = step.getEpoch();
        sample.invocation = step.getInvocation();
        sample.step = table.add(read_step(step, file, where + "step: "));
      }
      tile.samples.push_back(sample);
    }
    profile.tiles.push_back(std::move(tile));
  }
  if (earliest < 0) {
    for (auto& tile : profile.tiles) {
      for (auto& s : tile.samples) {
        s.start_cycle -= static_cast<uint64_t>(earliest);
        s.end_cycle -= static_cast<uint64_t>(earliest);
      }
    }
  }
}

// The first bytes of Lockstep's other binary files, so a mix-up is named.
void refuse_other_formats(const uint8_t* data, size_t size, const std::string& file) {
  if (size >= 6 && std::memcmp(data, "LKSPKG", 6) == 0) {
    throw InputError(file +
                     ": is a Lockstep package, not a profile (write one with `lockstep run PACKAGE "
                     "--profile FILE`)");
  }
  if (size >= 6 && std::memcmp(data, "LKSCAP", 6) == 0) {
    throw InputError(file + ": is a Lockstep capture, not a profile");
  }
}

// The segment table says how long the message is; a file cut short says so plainly.
void refuse_truncated(kj::ArrayPtr<const capnp::word> words, const std::string& file) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.begin());
  const auto u32 = [&](size_t at) {
    return uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 | uint32_t{bytes[at + 2]} << 16 |
           uint32_t{bytes[at + 3]} << 24;
  };
  const uint64_t segments = uint64_t{u32(0)} + 1;  // capnp_message_words checked the table fits
  uint64_t needed = (segments + 2) / 2;
  for (uint64_t i = 0; i < segments; ++i) needed += u32(4 + 4 * i);
  if (needed > words.size()) {
    throw InputError(file + ": truncated profile: the message needs " + std::to_string(8 * needed) +
                     " bytes, the file has " + std::to_string(8 * words.size()));
  }
}

// The first `want` words of a packed message (Cap'n Proto's packing: per word a tag byte
// whose bit i says byte i is not zero, then those bytes; tag 0 is followed by a count of
// further zero words, tag 0xff by a count of raw words), fewer where the bytes end.
std::vector<uint64_t> unpack_words(const uint8_t* data, size_t size, size_t want) {
  std::vector<uint64_t> out;
  size_t at = 0;
  const auto raw_word = [&](uint8_t mask) {
    uint64_t word = 0;
    for (int b = 0; b < 8; ++b) {
      if (mask & (1u << b)) word |= uint64_t{data[at++]} << (8 * b);
    }
    return word;
  };
  while (out.size() < want && at < size) {
    const uint8_t tag = data[at++];
    if (static_cast<size_t>(__builtin_popcount(tag)) > size - at) break;
    out.push_back(raw_word(tag));
    if ((tag != 0x00 && tag != 0xff) || at >= size) continue;
    const size_t run = data[at++];
    for (size_t k = 0; k < run && out.size() < want; ++k) {
      if (tag == 0xff && size - at < 8) return out;
      out.push_back(tag == 0x00 ? 0 : raw_word(0xff));
    }
  }
  return out;
}

// True when the bytes are a packed message whose root is a profile: they do not read as an
// unpacked message (its segment table does not add up to the file), and unpacked, the
// segment table is small, the root pointer points at the struct right after it, and the
// struct's first field is a profile schema version. Anything else is left to the reader.
bool is_packed_profile(const uint8_t* data, size_t size) {
  const auto u32 = [&](size_t at) {
    return uint32_t{data[at]} | uint32_t{data[at + 1]} << 8 | uint32_t{data[at + 2]} << 16 |
           uint32_t{data[at + 3]} << 24;
  };
  if (size >= 8 && size % 8 == 0 && u32(0) < 512 && (u32(0) + 3) / 2 <= size / 8) {
    uint64_t needed = (uint64_t{u32(0)} + 3) / 2;
    for (size_t i = 0; i <= u32(0); ++i) needed += u32(4 + 4 * i);
    if (needed == size / 8) return false;  // a whole unpacked message
  }
  const std::vector<uint64_t> head = unpack_words(data, size, 1);
  if (head.empty() || (head[0] & 0xffffffffu) >= 64) return false;
  const size_t table = ((head[0] & 0xffffffffu) + 3) / 2;
  const std::vector<uint64_t> words = unpack_words(data, size, table + 2);
  if (words.size() < table + 2) return false;
  const uint64_t root = words[table];
  const uint32_t version = static_cast<uint32_t>(words[table + 1]);
  const bool struct_here = (root & 0xffffffffu) == 0 && (root >> 32 & 0xffff) > 0;
  return struct_here && ((version >= 1 && version <= kProfileSchemaVersion) || version == kProfileCompactSchemaVersion);
}

}  // namespace

Profile parse_profile(const uint8_t* data, size_t size, const std::string& file_name) {
  refuse_other_formats(data, size, file_name);
  if (is_packed_profile(data, size)) {
    throw InputError(file_name +
                     ": is a packed Cap'n Proto message; Lockstep reads the unpacked form "
                     "(capnp convert packed:binary profile/profile.capnp Profile)");
  }
  kj::Array<capnp::word> copy;
  const auto words = capnp_message_words(data, size, copy, file_name, "profile");
  refuse_truncated(words, file_name);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 2 * words.size() + 8192;
  options.nestingLimit = 16;  // Profile > tiles > samples > step > lists: depth 6 suffices
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    if (reader.getEnd() != words.end()) {
      throw InputError(file_name + ": corrupt profile: " + std::to_string(8 * (words.end() - reader.getEnd())) +
                       " bytes after the message");
    }
    const auto root = reader.getRoot<profile_schema::Profile>();
    Profile profile;
    profile.schema_version = root.getSchemaVersion();
    if (profile.schema_version == kProfileCompactSchemaVersion) profile.schema_version = kProfileSchemaVersion;
    if (profile.schema_version < 1 || profile.schema_version > kProfileSchemaVersion) {
      throw InputError(file_name + ": schemaVersion: " + std::to_string(profile.schema_version) +
                       " is not a profile schema version this build reads (1.." +
                       std::to_string(kProfileSchemaVersion) +
                       " and Lockstep's compact 0x4c530005); is this a profile?");
    }
    // A device image is a flat message of the same family: read as a profile, its
    // tileMemoryBase lands in lockstepVersion and its tileMemorySize in clockHz's low half.
    constexpr uint32_t kImageMemoryBase = 0x4c000, kImageMemorySize = 638976;
    if (root.getLockstepVersion() == kImageMemoryBase && (root.getClockHz() & 0xffffffffu) == kImageMemorySize) {
      throw InputError(file_name +
                       ": is a device image (.ipuexe), not a profile (its header holds an image's tile "
                       "memory base and size; read it with `lockstep device inspect`)");
    }
    profile.lockstep_version = root.getLockstepVersion();
    if (profile.lockstep_version > kProfileLockstepVersion) {
      throw InputError(file_name + ": lockstepVersion: " + std::to_string(profile.lockstep_version) +
                       " is newer than this build reads (" + std::to_string(kProfileLockstepVersion) + ")");
    }
    profile.clock_hz = root.getClockHz();
    if (profile.clock_hz == 0) throw InputError(file_name + ": clockHz: 0 (a profile needs its clock)");
    profile.producer = text_field(root.getProducer(), file_name, "", "producer");
    profile.source = text_field(root.getSource(), file_name, "", "source");
    profile.machine_name = text_field(root.getMachineName(), file_name, "", "machineName");
    profile.total_cycles = root.getTotalCycles();
    read_tiles(root, profile, file_name);
    if (profile.lockstep_version == 0) {
      for (const auto& tile : profile.tiles) {
        for (const auto& s : tile.samples) profile.total_cycles = std::max(profile.total_cycles, s.end_cycle);
      }
    }
    return profile;
  } catch (const kj::Exception& e) {
    std::string what(e.getDescription().cStr());
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw InputError(file_name + ": malformed Cap'n Proto profile: " + what);
  }
}

Profile read_profile(const std::string& path) {
  const MappedFile file(path);
  return parse_profile(file.data(), file.size(), path);
}

namespace {

void fill_step(const ProfileStep& step, uint32_t epoch, uint32_t invocation, profile_schema::Step::Builder out) {
  out.setLocalIndex(step.local_index);
  out.setPhase(step.phase);
  out.setEpoch(epoch);
  out.setOperation(step.operation);
  out.setKind(static_cast<profile_schema::StepKind>(step.kind));
  out.setKernel(step.kernel);
  auto metadata = out.initMetadata(static_cast<unsigned>(step.metadata.size()));
  for (unsigned i = 0; i < step.metadata.size(); ++i) {
    metadata[i].setName(step.metadata[i].name);
    metadata[i].setValue(step.metadata[i].value);
  }
  auto activities = out.initExchangeActivities(static_cast<unsigned>(step.activities.size()));
  for (unsigned i = 0; i < step.activities.size(); ++i) {
    activities[i].setKind(static_cast<profile_schema::ExchangeActivityKind>(step.activities[i].kind));
    activities[i].setStartCycle(step.activities[i].start_cycle);
    activities[i].setEndCycle(step.activities[i].end_cycle);
  }
  out.setExchangeEventCycles(step.event_cycles);
  out.setPhaseLabel(step.phase_label);
  out.setInvocation(invocation);
}

// The words a step's texts and lists take beside its struct.
size_t step_words(const ProfileStep& step) {
  size_t words = capnp_text_words(step.operation) + capnp_text_words(step.kernel) + capnp_text_words(step.phase_label) +
                 capnp_struct_list_words<profile_schema::ExchangeActivity>(step.activities.size()) +
                 capnp_struct_list_words<profile_schema::Metadata>(step.metadata.size());
  for (const auto& m : step.metadata) words += capnp_text_words(m.name) + capnp_text_words(m.value);
  return words;
}

// At least the compact message's size in words: the root and its texts, the step table, the
// tiles and their samples, with a margin.
size_t compact_message_words(const Profile& profile) {
  size_t words = 64 + capnp_text_words(profile.producer) + capnp_text_words(profile.source) +
                 capnp_text_words(profile.machine_name) +
                 capnp_struct_list_words<profile_schema::Step>(profile.steps.size()) +
                 capnp_struct_list_words<profile_schema::TileProfile>(profile.tiles.size());
  for (const auto& step : profile.steps) words += step_words(step);
  for (const auto& tile : profile.tiles) {
    words += capnp_struct_list_words<profile_schema::CycleSample>(tile.samples.size());
  }
  return words + words / 64 + 256;
}

// The first segment: 1 Mi words (8 MiB), or the compact message's size where that is less.
// calloc zeroes the whole segment when the heap serves it, so a replay's 3 MB profile paid
// for 8 MB of fresh pages (35 ms of its 50 ms write). The message is laid out the same either
// way: it fits the one segment, and a larger one splits where it did (docs/performance.md,
// round twenty-nine).
unsigned first_segment_words(const Profile& profile, bool compact) {
  constexpr size_t kLargest = size_t{1} << 20;
  return static_cast<unsigned>(compact ? std::min(kLargest, compact_message_words(profile)) : kLargest);
}

}  // namespace

void write_profile(const Profile& profile, const std::string& path, ProfileLayout layout) {
  const bool compact = layout == ProfileLayout::Compact;
  capnp::MallocMessageBuilder message(first_segment_words(profile, compact));
  auto root = message.initRoot<profile_schema::Profile>();
  root.setSchemaVersion(compact ? kProfileCompactSchemaVersion : profile.schema_version);
  root.setClockHz(profile.clock_hz);
  root.setLockstepVersion(profile.lockstep_version);
  root.setProducer(profile.producer);
  root.setSource(profile.source);
  root.setMachineName(profile.machine_name);
  root.setTotalCycles(profile.total_cycles);
  if (compact) {
    auto steps = root.initSteps(static_cast<unsigned>(profile.steps.size()));
    for (unsigned i = 0; i < profile.steps.size(); ++i) fill_step(profile.steps[i], 0, 0, steps[i]);
  }
  auto tiles = root.initTiles(static_cast<unsigned>(profile.tiles.size()));
  for (unsigned t = 0; t < profile.tiles.size(); ++t) {
    const TileProfile& tile = profile.tiles[t];
    tiles[t].setPhysicalTile(tile.physical_tile);
    tiles[t].setLogicalTile(tile.logical_tile);
    auto samples = tiles[t].initSamples(static_cast<unsigned>(tile.samples.size()));
    for (unsigned i = 0; i < tile.samples.size(); ++i) {
      const CycleSample& s = tile.samples[i];
      if (s.end_cycle < s.start_cycle || s.end_cycle - s.start_cycle > kMaxSampleCycles) {
        throw InputError(path + ": tile " + std::to_string(tile.physical_tile) + " sample " + std::to_string(i) +
                         ": lasts 2^31 cycles or more, which the profile schema cannot hold");
      }
      samples[i].setStartCycle(static_cast<uint32_t>(s.start_cycle));
      samples[i].setEndCycle(static_cast<uint32_t>(s.end_cycle));
      samples[i].setStartCycleHigh(static_cast<uint32_t>(s.start_cycle >> 32));
      if (compact) {
        if (s.step >= profile.steps.size()) throw std::out_of_range("profile sample names a step beyond the table");
        samples[i].setStepIndex(s.step + 1);
        samples[i].setEpoch(s.epoch);
        samples[i].setInvocation(s.invocation);
      } else {
        fill_step(profile.steps.at(s.step), s.epoch, s.invocation, samples[i].initStep());
      }
    }
  }
  write_capnp_file(path, message);
}

}  // namespace lockstep::arch
