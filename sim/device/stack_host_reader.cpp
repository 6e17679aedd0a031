// Host phases of a stack image read back into steps (IPU21-DEVICE.md 8.7, 9.2 and 14): each
// descriptor of an `ipu_stack_static_host_run` group is one host phase, read from its packet
// words and the host program's sends; each follower of an `ipu_stack_static_repeat_call` group
// is one host phase the tile only takes part in. The helper's own copies (the packet words to
// 0x50000/0x50008 before the program, the staged words from 0x50180 after it) are copy steps of
// `ipu_stack_static_copy_u32` beside the host step. docs/device.md, "Host phases".
#include "arch/host_packets.hpp"
#include "arch/instruction.hpp"
#include "arch/registers.hpp"
#include "io/hex.hpp"
#include "sim/device/stack_code_reader.hpp"

// GCC 12's false "maybe uninitialized" on std::variant and std::optional moves, as in
// code_reader.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
using namespace registers;  // kM0 .. kZero, the exchange CSRs
namespace {

constexpr uint32_t kPacketBase = 0x50000, kHeaderBase = 0x50008, kStaging = 0x50180;
constexpr uint32_t kMaxHostPhases = 1u << 16;
constexpr uint32_t kMaxHostProgramWords = 4096;
constexpr uint32_t kFollowerRow[3] = {0x40c00001u /* sans 1 */, 0x41800001u /* sync 1 */, 0x43a00000u /* br $m10 */};

Step copy_words(uint32_t destination, uint32_t source, uint32_t words) {
  return Step{KernelStep{"ipu_stack_static_copy_u32", {{destination, false}, {source, false}}, {words}}};
}

}  // namespace

// The wrapper of section 14 around the body: `setzi $m8, 0x600+x; put 0xa0; sync 15|7`, the
// body, `sync 7; setzi $m8, 0x640; put 0xa0; br $m10`. Returns the body's sends in order as
// (byte address, words) spans of the outgoing stream.
std::vector<std::pair<uint32_t, uint32_t>> StackCodeReader::host_program_sends(uint32_t program) const {
  std::vector<Instruction> code;
  for (uint32_t a = program, n = 0;; a += 4) {
    if (++n > kMaxHostProgramWords) fail("the host program at " + hex(program) + " has no closing br $m10");
    const uint32_t words[2] = {memory(a), memory(a + 4)};
    DecodedInstruction d;
    try {
      d = decode(words, 0);
    } catch (const DecodeError&) {
      fail("the host program at " + hex(program) + " holds a word that is no instruction at " + hex(a));
    }
    code.push_back(d.instruction);
    if (d.word_count == 2) a += 4;
    if (d.instruction.op == Opcode::Return) break;  // br $m10
  }
  const auto is = [&](size_t i, Opcode op, uint32_t zone_or_reg) {
    return i < code.size() && code[i].op == op &&
           (op == Opcode::Sync  ? code[i].zone == zone_or_reg
            : op == Opcode::Put ? code[i].csr == zone_or_reg
                                : code[i].reg == zone_or_reg);
  };
  const size_t n = code.size();
  if (n < 7 || !is(0, Opcode::SetZi, kM8) || !is(1, Opcode::Put, kIncomingMux) ||
      !(is(2, Opcode::Sync, 15) || is(2, Opcode::Sync, 7)) || !is(n - 4, Opcode::Sync, 7) ||
      !is(n - 3, Opcode::SetZi, kM8) || !is(n - 2, Opcode::Put, kIncomingMux)) {
    fail("the host program at " + hex(program) + " is not wrapped as section 14 says");
  }
  std::vector<std::pair<uint32_t, uint32_t>> sends;
  uint32_t stream = 0;
  for (size_t i = 3; i + 4 < n; ++i) {
    const Instruction& in = code[i];
    if (in.op == Opcode::Send || in.op == Opcode::SendOff) {
      if (in.sctl & 4) fail("the host program at " + hex(program) + " sends 64-bit items");
      if (in.op == Opcode::Send) stream = 4 * in.address;
      stream += 4 * (in.op == Opcode::SendOff ? in.delta : 0);
      sends.emplace_back(stream, in.words);
      stream += 4 * in.words;
    } else if (!(in.op == Opcode::Delay || (in.op == Opcode::Sync && in.zone == 0) ||
                 (in.op == Opcode::SetZi && in.reg == kM8) || (in.op == Opcode::Put && in.csr == kIncomingDcount))) {
      fail("the host program at " + hex(program) + " holds " + describe(in) +
           ", which no host program of section 14 has");
    }
  }
  return sends;
}

// One descriptor's host phase: the packet words the helper placed at `packet` (count words)
// give the headers the program's sends read; a payload send follows each write header.
HostStep StackCodeReader::host_phase(const std::vector<std::pair<uint32_t, uint32_t>>& sends, uint32_t packet,
                                     const std::vector<uint32_t>& words) const {
  HostStep step;
  const uint32_t packet_end = packet + 4 * static_cast<uint32_t>(words.size());
  std::optional<HostPacket> write;
  for (const auto& [address, count] : sends) {
    if (address < packet || address >= packet_end) {
      if (!write)
        fail("a host program sends " + std::to_string(count) + " words from " + hex(address) +
             " with no write header before them");
      if (4 * count != write->bytes)
        fail("a host write of " + std::to_string(write->bytes) + " bytes sends " + std::to_string(4 * count) +
             " bytes");
      step.transfers.push_back({HostDirection::ToHost, address, write->host_address, write->bytes});
      write.reset();
      continue;
    }
    if (address < kHeaderBase) continue;  // the XREQ bitmap
    if (address + 4 * count > packet_end || count % 2 != 0)
      fail("a host program sends " + std::to_string(count) + " header words from " + hex(address) +
           " past its packet words");
    for (uint32_t w = 0; w < count; w += 2) {
      const size_t at = (address - packet) / 4 + w;
      const HostPacket h = decode_host_header(words[at], words[at + 1]);
      if (!h.to_tile) {
        write = h;
      } else if (h.bytes > 0) {  // the closing zero-byte read moves nothing
        step.transfers.push_back({HostDirection::ToTile, h.tile_address, h.host_address, h.bytes});
      }
    }
  }
  if (write) fail("a host write header with no payload after it");
  return step;
}

// Section 8.7: `setzi $m2,n; setzi $m3,table; setzi $m4,program; call host_run,$m9`.
void StackCodeReader::read_host_run(std::vector<Step>& steps) {
  const uint32_t count = take_immediate(kM2);
  const uint32_t table = take_immediate(kM3);
  const uint32_t program = take_immediate(kM4);
  take_call(kM9);
  if (count == 0 || count > kMaxHostPhases) fail("a host-run group of " + std::to_string(count) + " phases");
  const auto sends = host_program_sends(program);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t destination = memory(table + 12 * i), control = memory(table + 12 * i + 4),
                   source = memory(table + 12 * i + 8);
    const uint32_t staged = control & 0x7fffffu, packet_words = control >> 24;
    const uint32_t packet = (control & 0x800000u) ? kHeaderBase : kPacketBase;
    std::vector<uint32_t> words;
    for (uint32_t w = 0; w < packet_words; ++w) words.push_back(memory(source + 4 * w));
    if (packet_words > 0) steps.push_back(copy_words(packet, source, packet_words));
    steps.push_back(Step{host_phase(sends, packet, words)});
    if (staged > 0) {
      if (destination == 0) fail("a host-run descriptor stages " + std::to_string(staged) + " words to address 0");
      steps.push_back(copy_words(destination, kStaging, staged));
    }
  }
}

// Section 8.7: `setzi $m2,n; setzi $m3,follower; call repeat_call,$m9`, the follower row
// `sans 1; sync 1; br $m10`.
void StackCodeReader::read_host_followers(std::vector<Step>& steps) {
  const uint32_t count = take_immediate(kM2);
  const uint32_t follower = take_immediate(kM3);
  take_call(kM9);
  if (count == 0 || count > kMaxHostPhases) fail("a repeat-call group of " + std::to_string(count) + " phases");
  for (uint32_t w = 0; w < 3; ++w) {
    if (memory(follower + 4 * w) != kFollowerRow[w])
      fail("the follower row at " + hex(follower) + " is not `sans 1; sync 1; br $m10`");
  }
  for (uint32_t i = 0; i < count; ++i) steps.push_back(Step{HostStep{}});
}

}  // namespace lockstep::arch
