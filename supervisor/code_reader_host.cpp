// A host phase's program (supervisor/supervisor_emitter.cpp, host_step) read back: the
// wrapper, then the body's sends followed along the outgoing stream, their header words read
// from the tile's data tables. The request bitmap is skipped: lowering the steps again
// rewrites it, and device import compares every word.
#include <algorithm>
#include <map>

#include "arch/host_packets.hpp"
#include "arch/registers.hpp"
#include "io/hex.hpp"
#include "supervisor/code_reader.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
using namespace registers;  // kM0 .. kZero, the exchange CSRs
namespace {

constexpr size_t kMaxBodyWords = 1u << 16;

// Packets back into transfers: a packet joins the previous transfer when the two are
// contiguous on both sides, the packet does not start a staged copy, and the joined transfer
// cuts into exactly the same packets, so lowering the transfers again gives the same words.
void add_packet(std::vector<HostTransfer>& transfers, std::vector<HostPacket>& packets_of_last, const HostPacket& p,
                bool starts_copy) {
  const HostDirection direction = p.to_tile ? HostDirection::ToTile : HostDirection::ToHost;
  if (!transfers.empty() && !starts_copy) {
    HostTransfer& last = transfers.back();
    if (last.direction == direction && last.tile_address + last.bytes == p.tile_address &&
        last.host_address + last.bytes == p.host_address) {
      std::vector<HostPacket> joined = packets_of_last;
      joined.push_back(p);
      const auto again = host_packets(p.to_tile, last.tile_address, last.host_address, last.bytes + p.bytes);
      const bool same =
          again.size() == joined.size() &&
          std::equal(again.begin(), again.end(), joined.begin(), [](const HostPacket& a, const HostPacket& b) {
            return a.tile_address == b.tile_address && a.host_address == b.host_address && a.bytes == b.bytes;
          });
      if (same) {
        last.bytes += p.bytes;
        packets_of_last = std::move(joined);
        return;
      }
    }
  }
  transfers.push_back({direction, p.tile_address, p.host_address, p.bytes});
  packets_of_last = {p};
}

}  // namespace

Step CodeReader::read_host() {
  take_setzi(kM8);
  take_put(kIncomingMux, kM8);
  ++pc_;  // sync 7 or sync 15 (read_steps checked it)
  std::vector<HostPacket> packets;
  std::optional<HostPacket> write;  // a write header waiting for its payload
  uint32_t stream = 0;              // the outgoing stream's next byte address
  for (size_t n = 0;; ++n) {
    const auto in = at();
    if (!in || n > kMaxBodyWords) fail("a host program without its closing sync 7");
    if (in->op == Opcode::Sync && in->zone == 7) break;
    ++pc_;
    if ((in->op == Opcode::SetZi && in->reg == kM8) || (in->op == Opcode::Put && in->csr == kIncomingDcount) ||
        in->op == Opcode::Delay || (in->op == Opcode::Sync && in->zone == 0)) {
      continue;
    }
    if (in->op != Opcode::Send && in->op != Opcode::SendOff) {
      --pc_;
      fail(describe(*in) + " inside a host program (section 14 bodies hold sends, delays, sync 0 and the dcount)");
    }
    stream = in->op == Opcode::Send ? 4 * in->address : stream + 4 * in->delta;
    const uint32_t from = stream;
    stream += 4 * in->words;
    if (write) {  // the payload of the write header before it
      if (4 * in->words != write->bytes)
        fail("a host write of " + std::to_string(write->bytes) + " bytes sends " + std::to_string(4 * in->words));
      write->tile_address = from;
      packets.push_back(*write);
      write.reset();
      continue;
    }
    if (in->words % 2 != 0)
      fail("a host program sends " + std::to_string(in->words) + " header words from " + hex(from));
    for (uint32_t w = 0; w < in->words; w += 2) {
      const uint32_t word0 = memory(from + 4 * w), word1 = memory(from + 4 * w + 4);
      if ((word0 & 0x80000000u) == 0) continue;  // the request bitmap
      const HostPacket p = decode_host_header(word0, word1);
      if (!p.to_tile) {
        write = p;
      } else if (p.bytes > 0) {  // a zero-byte read closes a write
        packets.push_back(p);
      }
    }
  }
  if (write) fail("a host write header with no payload after it");
  take_zone(Opcode::Sync, 7);
  take_setzi(kM8);
  take_put(kIncomingMux, kM8);
  // The staged transfers' copies: `setzi $m2, to; setzi $m3, from; setzi $m4, words; call
  // $m10, lockstep_copy_words` each.
  std::map<uint32_t, uint32_t> copies;  // staging address -> destination
  while (next_is(Opcode::SetZi, kM2) && next_is(Opcode::SetZi, kM3, 1)) {
    size_t k = 2;
    while (at(k) && at(k)->op != Opcode::Call) ++k;
    if (!at(k) || symbol(at(k)->target) != "lockstep_copy_words") break;
    const uint32_t to = take_setzi(kM2), from = take_setzi(kM3);
    take_immediate(kM4);
    take_call(kM10);
    copies[from] = to;
  }
  HostStep step;
  std::vector<HostPacket> packets_of_last;
  for (const HostPacket& p : packets) add_packet(step.transfers, packets_of_last, p, copies.count(p.tile_address) > 0);
  for (HostTransfer& t : step.transfers) {
    if (const auto it = copies.find(t.tile_address); it != copies.end()) t.tile_address = it->second;
  }
  return Step{step};
}

}  // namespace lockstep::arch
