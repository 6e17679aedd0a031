// Host phases lowered (section 14): the host program inline, its packets in the code area's
// data, and the copy of staged bytes. Part of the SupervisorEmitter (supervisor_emitter.cpp).
#include <array>

#include "arch/host_packets.hpp"
#include "formats/package_validate_host.hpp"
#include "supervisor/emitter_instructions.hpp"
#include "supervisor/supervisor_emitter.hpp"

namespace lockstep::arch {

using namespace emitter;

// lockstep_copy_words: $m2 destination, $m3 source, $m4 words (at least 1), returns through
// $m10: the staged host data to its place (the stack's host-run helper does the same with
// its copy_u32, section 9.2). Emitted only for a program with staged host transfers.
void SupervisorEmitter::copy_words_helper() {
  const char* name = "lockstep_copy_words";
  symbol_label_[name] = new_label();
  symbols_.push_back({name, 0, false, "", 0});
  bind(symbol_label_[name]);
  const Label loop = new_label(), done = new_label();
  bind(loop);
  emit(ld32(kM0, kM3, 0));
  emit(st32(kM0, kM2));
  emit(arithmetic(Opcode::Add, kM2, kM2, 4));
  emit(arithmetic(Opcode::Add, kM3, kM3, 4));
  emit(arithmetic(Opcode::Add, kM4, kM4, -1));
  emit_ref(branch(Opcode::Brz, kM4), done);
  emit_ref(branch(Opcode::Brz, kZero), loop);
  bind(done);
  emit(br(kM10));
}

// A host phase (section 14). A tile that neither moves data nor requests for a reading tile
// abstains (`sans 1; sync 1`, section 6); the others run a host program inline: the incoming
// mux to the host endpoint, `sync 15` (requesting) or `sync 7`, the body, `sync 7`, the mux
// back. The model moves the step's transfers at the release (the host link, docs/timing.md);
// the body's packets are what a device needs.
void SupervisorEmitter::host_step(const Step& step, const HostStep& h) {
  std::vector<uint32_t> requests;
  if (host_phase_ < options_.host_readers.size()) {
    for (const uint32_t reader : options_.host_readers[host_phase_]) {
      if (host_requester(reader) == physical_) requests.push_back(reader);
    }
  }
  ++host_phase_;
  site(SiteRole::Host, &step);
  if (h.transfers.empty() && requests.empty()) {
    emit(sync(Opcode::Sans, 1));
    site(SiteRole::Barrier, &step);
    emit(sync(Opcode::Sync, 1));
    return;
  }
  emit(setzi(kM8, host_mux(physical_)));
  emit(put(kIncomingMux, kM8));
  site(SiteRole::Barrier, &step);
  emit(sync(Opcode::Sync, requests.empty() ? 7 : 15));
  host_body(h, requests);
  emit(sync(Opcode::Sync, 7));
  emit(setzi(kM8, machine_.neutral_mux));
  emit(put(kIncomingMux, kM8));
  const std::vector<uint32_t> landing = host_landing_addresses(h);
  for (size_t i = 0; i < h.transfers.size(); ++i) {
    if (landing[i] == h.transfers[i].tile_address) continue;
    emit(setzi(kM2, h.transfers[i].tile_address));
    emit(setzi(kM3, landing[i]));
    load_immediate(kM4, h.transfers[i].bytes / 4);
    call(kM10, symbol_label_["lockstep_copy_words"]);
  }
}

// Section 14's bodies: to the tile, the expected words, the headers (one stream) and `sync 0`;
// to the host, per packet its header and payload (a short payload padded to 18 events), the
// closing read and `sync 0`. The request goes after the body's first two words. Every send
// uses both fabric directions [decided: section 14 gives direction 3 for the request only].
void SupervisorEmitter::host_body(const HostStep& h, const std::vector<uint32_t>& requests) {
  const auto send_ref = [&](Label label, uint32_t offset_bytes, uint32_t words) {
    Instruction in = op(Opcode::Send);
    in.words = words;
    in.sctl = 3;
    emit_ref(in, label, static_cast<int32_t>(offset_bytes));
  };
  const auto request = [&] {
    if (requests.empty()) return;
    const std::array<uint32_t, 2> bitmap = host_request_bitmap(requests);
    send_ref(data({bitmap[0], bitmap[1]}), 0, 2);
  };
  if (h.transfers.empty()) {
    request();
    return;
  }
  const bool to_tile = h.transfers.front().direction == HostDirection::ToTile;
  std::vector<HostPacket> packets;
  uint32_t bytes = 0;
  const std::vector<uint32_t> landing = host_landing_addresses(h);
  for (size_t i = 0; i < h.transfers.size(); ++i) {
    const HostTransfer& t = h.transfers[i];
    for (const HostPacket& p : host_packets(to_tile, landing[i], t.host_address, t.bytes)) packets.push_back(p);
    bytes += t.bytes;
  }
  std::vector<uint32_t> headers;
  for (size_t i = 0; i < packets.size(); ++i) {
    if (const std::string why = host_packet_misfit(packets[i]); !why.empty()) fail("host step: " + why);
    const std::array<uint32_t, 2> w = encode_host_header(physical_, packets[i], i + 1 == packets.size());
    headers.insert(headers.end(), w.begin(), w.end());
  }
  if (!to_tile) {
    const std::array<uint32_t, 2> close = host_close_header(physical_);
    headers.insert(headers.end(), close.begin(), close.end());
  }
  const Label header_table = data(std::move(headers));
  emit(setzi(kM8, to_tile ? bytes / 4 : 1));
  emit(put(kIncomingDcount, kM8));
  request();
  if (to_tile) {
    send_ref(header_table, 0, 2);
    for (size_t i = 1; i < packets.size(); ++i) {
      Instruction more = op(Opcode::SendOff);
      more.words = 2;
      more.sctl = 3;
      emit(more);
    }
  } else {
    for (size_t i = 0; i < packets.size(); ++i) {
      send_ref(header_table, static_cast<uint32_t>(8 * i), 2);
      Instruction payload = op(Opcode::Send);
      payload.words = packets[i].bytes / 4;
      payload.address = packets[i].tile_address / 4;
      payload.sctl = 3;
      emit(payload);
      if (payload.words < kHostMinWriteEvents) {
        Instruction pad = op(Opcode::Delay);
        pad.events = kHostMinWriteEvents - payload.words;  // `delay (18 - words - 1)`
        emit(pad);
      }
    }
    send_ref(header_table, static_cast<uint32_t>(8 * packets.size()), 2);
  }
  emit(sync(Opcode::Sync, 0));
}

}  // namespace lockstep::arch
