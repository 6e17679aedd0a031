// Writing an application file (`.ipuexe`): the in-memory Application field by field into
// one flat Cap'n Proto message (sim/device/application.capnp). Lists are written in the order
// they are held, so the same Application always gives the same bytes.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/capnp_words.hpp"
#include "sim/device/application.capnp.h"
#include "sim/device/application.hpp"

namespace lockstep::arch {
namespace {

namespace s = app_schema;

unsigned count(size_t n) { return static_cast<unsigned>(n); }

void fill_u32s(capnp::List<uint32_t>::Builder out, const std::vector<uint32_t>& in) {
  for (unsigned i = 0; i < in.size(); ++i) out.set(i, in[i]);
}

void fill_tiles(capnp::List<s::TileImage>::Builder out, const std::vector<TileImage>& in) {
  for (unsigned t = 0; t < in.size(); ++t) {
    const TileImage& tile = in[t];
    auto b = out[t];
    b.setPhysicalTile(tile.physical_tile);
    b.setEntryPoint(tile.entry_point);
    b.setCommandAddress(tile.command_address);
    b.setDiagnosticAddress(tile.diagnostic_address);
    auto segments = b.initSegments(count(tile.segments.size()));
    for (unsigned i = 0; i < tile.segments.size(); ++i) {
      const AppSegment& seg = tile.segments[i];
      segments[i].setAddress(seg.address);
      segments[i].setMemorySize(seg.memory_size);
      segments[i].setData(kj::arrayPtr(seg.data.data(), seg.data.size()));
      segments[i].setFlags(seg.flags);
    }
  }
}

void fill_bindings(capnp::List<s::Binding>::Builder out, const std::vector<AppBinding>& in) {
  for (unsigned i = 0; i < in.size(); ++i) {
    const AppBinding& binding = in[i];
    out[i].setName(binding.name);
    out[i].setDtype(binding.dtype);
    fill_u32s(out[i].initShape(count(binding.shape.size())), binding.shape);
    auto slices = out[i].initSlices(count(binding.slices.size()));
    for (unsigned k = 0; k < binding.slices.size(); ++k) {
      slices[k].setTile(binding.slices[k].tile);
      slices[k].setTileAddress(binding.slices[k].tile_address);
      slices[k].setFileOffset(binding.slices[k].file_offset);
      slices[k].setSize(binding.slices[k].size);
    }
  }
}

void fill_host_slices(capnp::List<s::HostSlice>::Builder out, const std::vector<HostSlice>& in) {
  for (unsigned i = 0; i < in.size(); ++i) {
    out[i].setPage(in[i].page);
    out[i].setPageOffset(in[i].page_offset);
    out[i].setFileOffset(in[i].file_offset);
    out[i].setSize(in[i].size);
  }
}

void fill_host_exchange(s::HostExchange::Builder out, const HostExchange& in) {
  out.setStartupMark(in.startup_mark);
  out.setCommandPage(in.command_page);
  out.setCommandOffset(in.command_offset);
  auto pages = out.initPages(count(in.pages.size()));
  for (unsigned i = 0; i < in.pages.size(); ++i) {
    pages[i].setIndex(in.pages[i].index);
    pages[i].setSize(in.pages[i].size);
  }
  fill_u32s(out.initAttachOrder(count(in.attach_order.size())), in.attach_order);
  auto calls = out.initCalls(count(in.calls.size()));
  for (unsigned i = 0; i < in.calls.size(); ++i) {
    const HostCall& call = in.calls[i];
    calls[i].setName(call.name);
    calls[i].setCommand(call.command);
    calls[i].setPhases(call.phases);
    fill_host_slices(calls[i].initInputs(count(call.inputs.size())), call.inputs);
    fill_host_slices(calls[i].initOutputs(count(call.outputs.size())), call.outputs);
    calls[i].setInvocations(call.invocations);
    fill_u32s(calls[i].initInputBatchEnds(count(call.input_batch_ends.size())), call.input_batch_ends);
    fill_u32s(calls[i].initOutputBatchEnds(count(call.output_batch_ends.size())), call.output_batch_ends);
  }
}

void fill_plan_step(profile_schema::Step::Builder out, const PlanStep& in) {
  const ProfileStep& step = in.step;
  out.setLocalIndex(step.local_index);
  out.setPhase(step.phase);
  out.setEpoch(in.epoch);
  out.setOperation(step.operation);
  out.setKind(static_cast<profile_schema::StepKind>(step.kind));
  out.setKernel(step.kernel);
  auto metadata = out.initMetadata(count(step.metadata.size()));
  for (unsigned i = 0; i < step.metadata.size(); ++i) {
    metadata[i].setName(step.metadata[i].name);
    metadata[i].setValue(step.metadata[i].value);
  }
  auto activities = out.initExchangeActivities(count(step.activities.size()));
  for (unsigned i = 0; i < step.activities.size(); ++i) {
    activities[i].setKind(static_cast<profile_schema::ExchangeActivityKind>(step.activities[i].kind));
    activities[i].setStartCycle(step.activities[i].start_cycle);
    activities[i].setEndCycle(step.activities[i].end_cycle);
  }
  out.setExchangeEventCycles(step.event_cycles);
  out.setPhaseLabel(step.phase_label);
  out.setInvocation(in.invocation);
}

void fill_debug(s::Application::Builder root, const Application& app) {
  auto plans = root.initProfileTiles(count(app.profile_tiles.size()));
  for (unsigned i = 0; i < app.profile_tiles.size(); ++i) {
    plans[i].setPhysicalTile(app.profile_tiles[i].physical_tile);
    const auto& steps = app.profile_tiles[i].steps;
    auto out = plans[i].initSteps(count(steps.size()));
    for (unsigned k = 0; k < steps.size(); ++k) fill_plan_step(out[k], steps[k]);
  }
  auto symbols = root.initDebugSymbols(count(app.debug_symbols.size()));
  for (unsigned i = 0; i < app.debug_symbols.size(); ++i) {
    symbols[i].setName(app.debug_symbols[i].name);
    symbols[i].setAddress(app.debug_symbols[i].address);
  }
  auto regions = root.initDebugRegions(count(app.debug_regions.size()));
  for (unsigned i = 0; i < app.debug_regions.size(); ++i) {
    const DebugRegion& r = app.debug_regions[i];
    regions[i].setPhysicalTile(r.physical_tile);
    regions[i].setAddress(r.address);
    regions[i].setSize(r.size);
    regions[i].setName(r.name);
  }
}

void build(capnp::MessageBuilder& message, const Application& app) {
  auto root = message.initRoot<s::Application>();
  root.setSchemaVersion(app.schema_version);
  root.setCompilerVersion(app.compiler_version);
  root.setTarget(app.target);
  root.setTileMemoryBase(app.tile_memory_base);
  root.setTileMemorySize(app.tile_memory_size);
  fill_tiles(root.initTiles(count(app.tiles.size())), app.tiles);
  fill_bindings(root.initInputs(count(app.inputs.size())), app.inputs);
  fill_bindings(root.initOutputs(count(app.outputs.size())), app.outputs);
  fill_bindings(root.initWeights(count(app.weights.size())), app.weights);
  fill_host_exchange(root.initHostExchange(), app.host_exchange);
  auto entries = root.initEntryPoints(count(app.entry_points.size()));
  for (unsigned i = 0; i < app.entry_points.size(); ++i) {
    entries[i].setName(app.entry_points[i].name);
    entries[i].setCommand(app.entry_points[i].command);
    entries[i].setExternalSyncs(app.entry_points[i].external_syncs);
  }
  auto writes = root.initDeviceConfigWrites(count(app.device_config_writes.size()));
  for (unsigned i = 0; i < app.device_config_writes.size(); ++i) {
    writes[i].setOffset(app.device_config_writes[i].offset);
    writes[i].setValue(app.device_config_writes[i].value);
  }
  fill_debug(root, app);
}

}  // namespace

std::string application_bytes(const Application& app) {
  capnp::MallocMessageBuilder message(1u << 16);
  build(message, app);
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  return {reinterpret_cast<const char*>(bytes.begin()), bytes.size()};
}

void write_application(const Application& app, const std::string& path) {
  validate_application(app, path);
  capnp::MallocMessageBuilder message(1u << 16);
  build(message, app);
  write_capnp_file(path, message);
}

}  // namespace lockstep::arch
