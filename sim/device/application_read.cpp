// Reading an application file (`.ipuexe`): one flat Cap'n Proto message, root Application
// (sim/device/application.capnp, docs/IPU21-DEVICE.md section 12).
//
// Section 12 says the stack's reader disables Cap'n Proto's traversal limit, so a large
// image is never refused for its size; this reader does too. What the limit guards against,
// a small hostile file whose pointers all alias one big list, is guarded here instead: every
// list element and data byte copied is charged against the message's own size, which an
// honest writer (one object per pointer) never exceeds.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "io/capnp_words.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/utf8.hpp"
#include "profile/profile.hpp"
#include "sim/device/application.capnp.h"
#include "sim/device/application.hpp"

namespace lockstep::arch {
namespace {

namespace s = app_schema;

class Reader {
 public:
  Reader(std::string file, uint64_t budget) : file_(std::move(file)), budget_(budget) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(file_ + ": " + where + ": " + what);
  }

  // Charges `count` elements (at least one byte each) or bytes against the message size.
  void charge(uint64_t count, const std::string& where) {
    if (count > budget_) {
      fail(where, "the message refers to more data than the file holds (corrupt or aliased pointers)");
    }
    budget_ -= count;
  }

  std::string text(capnp::Text::Reader in, const std::string& where) {
    charge(in.size(), where);
    std::string out(in.cStr(), in.size());
    if (const auto bad = first_invalid_utf8(out)) fail(where, "invalid UTF-8 at byte " + std::to_string(*bad));
    return out;
  }

  template <typename List>
  List list(List in, const std::string& where) {
    charge(in.size(), where);
    return in;
  }

  std::vector<uint32_t> u32s(capnp::List<uint32_t>::Reader in, const std::string& where) {
    charge(in.size(), where);
    std::vector<uint32_t> out;
    out.reserve(in.size());
    for (uint32_t v : in) out.push_back(v);
    return out;
  }

  std::vector<TileImage> tiles(capnp::List<s::TileImage>::Reader in) {
    std::vector<TileImage> out;
    for (auto t : list(in, "tiles")) {
      const std::string where = "tiles[" + std::to_string(out.size()) + "]";
      TileImage tile{t.getPhysicalTile(), t.getEntryPoint(), {}, t.getCommandAddress(), t.getDiagnosticAddress()};
      for (auto seg : list(t.getSegments(), where + ".segments")) {
        const std::string at = where + ".segments[" + std::to_string(tile.segments.size()) + "]";
        const auto data = seg.getData();
        charge(data.size(), at + ".data");
        tile.segments.push_back({seg.getAddress(), seg.getMemorySize(), {data.begin(), data.end()}, seg.getFlags()});
      }
      out.push_back(std::move(tile));
    }
    return out;
  }

  std::vector<AppBinding> bindings(capnp::List<s::Binding>::Reader in, const std::string& field) {
    std::vector<AppBinding> out;
    for (auto b : list(in, field)) {
      const std::string where = field + "[" + std::to_string(out.size()) + "]";
      AppBinding binding{text(b.getName(), where + ".name"),
                         text(b.getDtype(), where + ".dtype"),
                         u32s(b.getShape(), where + ".shape"),
                         {}};
      for (auto s : list(b.getSlices(), where + ".slices")) {
        binding.slices.push_back({s.getTile(), s.getTileAddress(), s.getFileOffset(), s.getSize()});
      }
      out.push_back(std::move(binding));
    }
    return out;
  }

  std::vector<HostSlice> host_slices(capnp::List<s::HostSlice>::Reader in, const std::string& where) {
    std::vector<HostSlice> out;
    for (auto s : list(in, where)) out.push_back({s.getPage(), s.getPageOffset(), s.getFileOffset(), s.getSize()});
    return out;
  }

  HostExchange host_exchange(s::HostExchange::Reader in) {
    HostExchange out{in.getStartupMark(), in.getCommandPage(), in.getCommandOffset(), {}, {}, {}};
    for (auto p : list(in.getPages(), "hostExchange.pages")) out.pages.push_back({p.getIndex(), p.getSize()});
    out.attach_order = u32s(in.getAttachOrder(), "hostExchange.attachOrder");
    for (auto c : list(in.getCalls(), "hostExchange.calls")) {
      const std::string where = "hostExchange.calls[" + std::to_string(out.calls.size()) + "]";
      HostCall call;
      call.name = text(c.getName(), where + ".name");
      call.command = c.getCommand();
      call.phases = c.getPhases();
      call.inputs = host_slices(c.getInputs(), where + ".inputs");
      call.outputs = host_slices(c.getOutputs(), where + ".outputs");
      call.invocations = c.getInvocations();
      call.input_batch_ends = u32s(c.getInputBatchEnds(), where + ".inputBatchEnds");
      call.output_batch_ends = u32s(c.getOutputBatchEnds(), where + ".outputBatchEnds");
      out.calls.push_back(std::move(call));
    }
    return out;
  }

  PlanStep plan_step(profile_schema::Step::Reader in, const std::string& where) {
    PlanStep out;
    ProfileStep& step = out.step;
    step.local_index = in.getLocalIndex();
    step.phase = in.getPhase();
    out.epoch = in.getEpoch();
    step.operation = text(in.getOperation(), where + ".operation");
    const auto kind = static_cast<uint16_t>(in.getKind());
    if (kind > 3) fail(where + ".kind", std::to_string(kind) + " is not a step kind (0..3)");
    step.kind = static_cast<ProfileStepKind>(kind);
    step.kernel = text(in.getKernel(), where + ".kernel");
    for (auto m : list(in.getMetadata(), where + ".metadata")) {
      step.metadata.push_back(
          {text(m.getName(), where + ".metadata.name"), text(m.getValue(), where + ".metadata.value")});
    }
    for (auto a : list(in.getExchangeActivities(), where + ".exchangeActivities")) {
      const auto activity = static_cast<uint16_t>(a.getKind());
      if (activity > 2)
        fail(where + ".exchangeActivities", "kind " + std::to_string(activity) + " is not an activity kind (0..2)");
      step.activities.push_back({static_cast<ActivityKind>(activity), a.getStartCycle(), a.getEndCycle()});
    }
    step.event_cycles = in.getExchangeEventCycles();
    step.phase_label = text(in.getPhaseLabel(), where + ".phaseLabel");
    out.invocation = in.getInvocation();
    return out;
  }

  void debug(s::Application::Reader in, Application& out) {
    for (auto p : list(in.getProfileTiles(), "profileTiles")) {
      const std::string where = "profileTiles[" + std::to_string(out.profile_tiles.size()) + "]";
      TileProfilePlan plan{p.getPhysicalTile(), {}};
      for (auto step : list(p.getSteps(), where + ".steps")) {
        plan.steps.push_back(plan_step(step, where + ".steps[" + std::to_string(plan.steps.size()) + "]"));
      }
      out.profile_tiles.push_back(std::move(plan));
    }
    for (auto d : list(in.getDebugSymbols(), "debugSymbols")) {
      out.debug_symbols.push_back(
          {text(d.getName(), "debugSymbols[" + std::to_string(out.debug_symbols.size()) + "].name"), d.getAddress()});
    }
    for (auto d : list(in.getDebugRegions(), "debugRegions")) {
      const std::string name = text(d.getName(), "debugRegions[" + std::to_string(out.debug_regions.size()) + "].name");
      out.debug_regions.push_back({d.getPhysicalTile(), d.getAddress(), d.getSize(), name});
    }
  }

  Application application(s::Application::Reader in) {
    Application out;
    out.schema_version = in.getSchemaVersion();
    out.compiler_version = text(in.getCompilerVersion(), "compilerVersion");
    out.target = text(in.getTarget(), "target");
    out.tile_memory_base = in.getTileMemoryBase();
    out.tile_memory_size = in.getTileMemorySize();
    out.tiles = tiles(in.getTiles());
    out.inputs = bindings(in.getInputs(), "inputs");
    out.outputs = bindings(in.getOutputs(), "outputs");
    out.weights = bindings(in.getWeights(), "weights");
    out.host_exchange = host_exchange(in.getHostExchange());
    for (auto e : list(in.getEntryPoints(), "entryPoints")) {
      const std::string where = "entryPoints[" + std::to_string(out.entry_points.size()) + "].name";
      out.entry_points.push_back({text(e.getName(), where), e.getCommand(), e.getExternalSyncs()});
    }
    for (auto w : list(in.getDeviceConfigWrites(), "deviceConfigWrites")) {
      out.device_config_writes.push_back({w.getOffset(), w.getValue()});
    }
    debug(in, out);
    return out;
  }

 private:
  std::string file_;
  uint64_t budget_;
};

// Lockstep's other binary files start with a magic; name the mix-up.
void refuse_other_formats(const uint8_t* data, size_t size, const std::string& file) {
  if (size >= 6 && std::memcmp(data, "LKSPKG", 6) == 0) {
    throw InputError(file + ": is a Lockstep package, not a device image (make one with `lockstep device export`)");
  }
  if (size >= 6 && std::memcmp(data, "LKSCAP", 6) == 0) {
    throw InputError(file + ": is a Lockstep capture, not a device image");
  }
}

// The segment table's sizes must add up to the file: a cut file says so plainly.
void refuse_truncated(kj::ArrayPtr<const capnp::word> words, const std::string& file) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.begin());
  const auto u32 = [&](size_t at) {
    return uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 | uint32_t{bytes[at + 2]} << 16 |
           uint32_t{bytes[at + 3]} << 24;
  };
  const uint64_t segments = uint64_t{u32(0)} + 1;
  uint64_t needed = (segments + 2) / 2;
  for (uint64_t i = 0; i < segments; ++i) needed += u32(4 + 4 * i);
  if (needed > words.size()) {
    throw InputError(file + ": truncated device image: the message needs " + std::to_string(8 * needed) +
                     " bytes, the file has " + std::to_string(8 * words.size()));
  }
  if (needed < words.size()) {
    throw InputError(file + ": corrupt device image: " + std::to_string(8 * (words.size() - needed)) +
                     " bytes after the message");
  }
}

// Section 12.2: a header mismatch is an incompatible package, whatever else the file holds.
void check_header(s::Application::Reader in, const std::string& file) {
  // A cycle profile is a flat message of the same family: read as an image, its producer text
  // lands in `target` and its lockstepVersion (0 or 1) in tileMemoryBase.
  const auto target_text = in.getTarget();
  const uint32_t version = in.getSchemaVersion();
  const bool profile_version =
      (version >= 1 && version <= kProfileSchemaVersion) || version == kProfileCompactSchemaVersion;
  if (std::string_view(target_text.cStr(), target_text.size()) != kApplicationTarget && in.getTileMemoryBase() <= 1 &&
      profile_version) {
    throw InputError(file +
                     ": is a cycle profile (.lsprof), not a device image (its header holds a profile's "
                     "fields; read it with `lockstep profile summary`)");
  }
  const auto mismatch = [&](const std::string& field, const std::string& found, const std::string& expected) {
    throw InputError(file + ": incompatible package header: " + field + " " + found + " (expected " + expected + ")");
  };
  if (in.getSchemaVersion() != kApplicationSchemaVersion) {
    mismatch("schemaVersion", std::to_string(in.getSchemaVersion()), std::to_string(kApplicationSchemaVersion));
  }
  const auto target = in.getTarget();
  if (std::string_view(target.cStr(), target.size()) != kApplicationTarget) {
    std::string shown(target.cStr(), std::min<size_t>(target.size(), 32));
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    }
    mismatch("target", "\"" + shown + "\"", std::string("\"") + kApplicationTarget + "\"");
  }
  if (in.getTileMemoryBase() != kApplicationMemoryBase) {
    mismatch("tileMemoryBase", std::to_string(in.getTileMemoryBase()), std::to_string(kApplicationMemoryBase));
  }
  if (in.getTileMemorySize() != kApplicationMemorySize) {
    mismatch("tileMemorySize", std::to_string(in.getTileMemorySize()), std::to_string(kApplicationMemorySize));
  }
}

}  // namespace

Application parse_application(const uint8_t* data, size_t size, const std::string& file_name) {
  refuse_other_formats(data, size, file_name);
  kj::Array<capnp::word> copy;
  const auto words = capnp_message_words(data, size, copy, file_name, "device image");
  refuse_truncated(words, file_name);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::numeric_limits<uint64_t>::max();  // section 12: disabled
  options.nestingLimit = 16;  // Application > tiles > segments: depth 4 suffices
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    const auto root = reader.getRoot<s::Application>();
    check_header(root, file_name);
    Application app = Reader(file_name, 8 * words.size()).application(root);
    validate_application(app, file_name);
    return app;
  } catch (const kj::Exception& e) {
    std::string what(e.getDescription().cStr());
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::replace(what.begin(), what.end(), '\r', ' ');
    throw InputError(file_name + ": corrupt device image: " + what);
  }
}

Application read_application(const std::string& path) {
  const MappedFile file(path);
  return parse_application(file.data(), file.size(), path);
}

}  // namespace lockstep::arch
