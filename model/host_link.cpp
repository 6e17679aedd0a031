#include "model/host_link.hpp"

#include <algorithm>
#include <cstring>

#include "formats/package_validate_host.hpp"
#include "io/errors.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

namespace {

uint64_t file_bytes(const std::vector<arch::HostFileSlice>& slices) {
  uint64_t end = 0;
  for (const auto& s : slices) end = std::max(end, s.file_offset + s.bytes);
  return end;
}

// [first, end) of batch b's slices.
std::pair<size_t, size_t> batch(const std::vector<uint32_t>& ends, size_t b) {
  return {b == 0 ? 0 : ends[b - 1], ends[b]};
}

constexpr uint8_t kUnwrittenOutput = 0xa5;  // what the host fills output slices with (section 13)

}  // namespace

uint64_t host_input_bytes(const arch::HostCallSpec& call) { return file_bytes(call.inputs); }
uint64_t host_output_bytes(const arch::HostCallSpec& call) { return file_bytes(call.outputs); }

bool host_call_streams(const arch::HostCallSpec& call) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto* list : {&call.inputs, &call.outputs}) {
    for (const auto& s : *list) ranges.emplace_back(s.host_address, uint64_t(s.host_address) + s.bytes);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) return true;
  }
  return false;
}

uint64_t host_phase_cycles(const std::vector<const arch::HostStep*>& steps) {
  uint64_t busiest = 0, total_bytes = 0;
  for (const arch::HostStep* step : steps) {
    uint64_t events = 0;
    for (const auto& t : step->transfers) {
      const uint64_t words = t.bytes / 4;
      events += t.direction == arch::HostDirection::ToTile ? kHostRouteCycles + words
                                                           : std::max(kHostMinimumPayloadEvents, words);
      total_bytes += t.bytes;
    }
    busiest = std::max(busiest, events);
  }
  const uint64_t link = (total_bytes + kHostLinkBytesPerCycle - 1) / kHostLinkBytesPerCycle;
  return kHostPhaseFixedCycles + std::max(busiest, link);
}

HostLink::HostLink(const arch::HostSession& session, std::vector<HostCallRun> calls, uint32_t program_phases)
    : session_(session), calls_(std::move(calls)), arena_(session.arena_bytes, 0) {
  uint64_t phases = 0;
  for (HostCallRun& run : calls_) {
    const uint64_t expected = host_input_bytes(*run.call);
    if (run.input.size() != expected) {
      throw InputError("host call " + run.call->name + ": expects " + std::to_string(expected) + " input bytes, got " +
                       std::to_string(run.input.size()));
    }
    run.output.assign(host_output_bytes(*run.call), 0);
    run.streams = host_call_streams(*run.call);
    phases += run.call->phases;
  }
  if (phases != program_phases) {
    std::string names;
    for (const HostCallRun& run : calls_) names += (names.empty() ? "" : " ") + run.call->name;
    throw InputError("host calls [" + names + "] take " + std::to_string(phases) + " host phases, the program runs " +
                     std::to_string(program_phases));
  }
  if (!calls_.empty()) begin_call(calls_.front());
}

void HostLink::copy_in(const HostCallRun& run, const std::vector<arch::HostFileSlice>& slices, size_t first,
                       size_t end) {
  for (size_t i = first; i < end; ++i) {
    const arch::HostFileSlice& s = slices[i];
    std::memcpy(arena_.data() + s.host_address, run.input.data() + s.file_offset, s.bytes);
  }
}

void HostLink::copy_out(HostCallRun& run, size_t first, size_t end) {
  for (size_t i = first; i < end; ++i) {
    const arch::HostFileSlice& s = run.call->outputs[i];
    std::memcpy(run.output.data() + s.file_offset, arena_.data() + s.host_address, s.bytes);
  }
}

// Section 13's "invoke call": inputs into their pages (all at once unless streaming), output
// slices filled with 0xa5, the command word.
void HostLink::begin_call(HostCallRun& run) {
  const arch::HostCallSpec& call = *run.call;
  if (!run.streams) copy_in(run, call.inputs, 0, call.inputs.size());
  for (const auto& s : call.outputs) std::memset(arena_.data() + s.host_address, kUnwrittenOutput, s.bytes);
  const uint32_t command = call.command;
  std::memcpy(arena_.data() + session_.command_address, &command, 4);
  phase_ = 0;
  captured_ = 0;
}

// Streaming: before acknowledging even phase 2b, input batch b goes in, or once the inputs are
// in, the previous output batch comes out (the slot is about to be reused).
void HostLink::host_side(HostCallRun& run, uint32_t phase) {
  const arch::HostCallSpec& call = *run.call;
  if (!run.streams || phase % 2 != 0) return;
  const size_t b = phase / 2, inputs = call.input_batch_ends.size();
  if (b < inputs) {
    const auto [first, end] = batch(call.input_batch_ends, b);
    copy_in(run, call.inputs, first, end);
  } else if (b > inputs && b - inputs - 1 < call.output_batch_ends.size()) {
    const auto [first, end] = batch(call.output_batch_ends, b - inputs - 1);
    copy_out(run, first, end);
    captured_ = b - inputs;
  }
}

void HostLink::end_call(HostCallRun& run) {
  const arch::HostCallSpec& call = *run.call;
  if (!run.streams) {
    copy_out(run, 0, call.outputs.size());
    return;
  }
  for (size_t b = captured_; b < call.output_batch_ends.size(); ++b) {
    const auto [first, end] = batch(call.output_batch_ends, b);
    copy_out(run, first, end);
  }
}

uint64_t HostLink::execute(uint32_t ordinal, std::span<Tile* const> tiles) {
  // Calls without phases run between the ones around them.
  while (call_ < calls_.size() && phase_ == calls_[call_].call->phases) {
    end_call(calls_[call_]);
    if (++call_ < calls_.size()) begin_call(calls_[call_]);
  }
  HostCallRun& run = calls_.at(call_);  // the constructor checked the phases add up
  host_side(run, phase_++);
  std::vector<const arch::HostStep*> steps;
  for (Tile* tile : tiles) steps.push_back(tile->pending_host());
  for (const auto direction : {arch::HostDirection::ToHost, arch::HostDirection::ToTile}) {
    for (size_t i = 0; i < tiles.size(); ++i) {
      // A staged transfer lands in the staging buffer; the tile's code copies it on.
      const std::vector<uint32_t> landing = arch::host_landing_addresses(*steps[i]);
      for (size_t k = 0; k < steps[i]->transfers.size(); ++k) {
        const arch::HostTransfer& t = steps[i]->transfers[k];
        if (t.direction != direction) continue;
        uint8_t* host = arena_.data() + t.host_address;
        if (direction == arch::HostDirection::ToHost)
          tiles[i]->memory().read(t.tile_address, t.bytes, host);
        else
          tiles[i]->memory().write(landing[k], t.bytes, host);
        if (watcher != nullptr && direction == arch::HostDirection::ToTile) {
          watcher->written(tiles[i]->logical(), landing[k], t.bytes, tiles[i]->memory(),
                           "host phase " + std::to_string(ordinal) + " (call " + run.call->name + ")",
                           {sc_core::sc_time_stamp().value(), tiles[i]->current_phase(), tiles[i]->iteration()});
        }
      }
    }
  }
  const uint64_t cycles = host_phase_cycles(steps);
  cycles_ += cycles;
  return cycles;
}

void HostLink::finish() {
  while (call_ < calls_.size()) {
    if (phase_ != calls_[call_].call->phases) return;  // the run stopped early
    end_call(calls_[call_]);
    if (++call_ < calls_.size()) begin_call(calls_[call_]);
  }
}

}  // namespace lockstep::model
