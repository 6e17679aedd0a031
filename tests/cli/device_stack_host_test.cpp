// `device simulate` and `device import` of a stack-layout image with host phases, written word
// by word from IPU21-DEVICE.md (8.7 host-run and repeat-call groups, 9.2 descriptors, 12.1
// bindings and host exchange, 13 the stack's host protocol, 14 wrappers and packets, 17.3
// profiling bindings), not by Lockstep's exporter: a 64-tile machine; the weights arrive by the
// `initialize` call, the inputs by `run`; two tiles run the GEMM, GeLU, reduction and copy
// between cycle samples and send the result, the samples and the profile back, one batch per
// output binding, through their 4 KiB slot of the host page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "arch/instruction.hpp"
#include "arch/topology.hpp"
#include "profile/profile.hpp"
#include "sim/device/application.hpp"
#include "support/stack_image.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

using namespace stack_image;

constexpr uint32_t kStart = 0x52000, kSample = 0x52040, kComplete = 0x52080, kGemm = 0x520c0, kGelu = 0x52100,
                   kReduce = 0x52140, kCopy = 0x52180, kHostRun = 0x521c0, kRepeatCall = 0x52200, kCopyU32 = 0x52240,
                   kLinkedEnd = 0x52280;
constexpr uint32_t kHostPrograms = 0x53000, kDescriptors = 0x54000, kProgram = 0x5c000, kBuffer = 0x70000;
constexpr uint32_t kLeft = 0x60000, kRight = 0x61000, kProduct = 0x62000, kGelued = 0x62200, kSum = 0x62400,
                   kRemote = 0x63000, kResult = 0x64000;
constexpr uint32_t kParticipants = 2, kSlot = 4096, kSlotsBase = 4096;
constexpr uint32_t kLeftBytes = kK * kRows * 2, kRightBytes = kK * kColumns * 2, kResultBytes = kElements * 2;

uint32_t encode_one(arch::Instruction in) { return arch::encode(in).at(0); }
uint32_t op_word(arch::Opcode op, uint32_t zone) {
  arch::Instruction in;
  in.op = op;
  in.zone = zone;
  return encode_one(in);
}
uint32_t put(uint32_t csr, uint32_t reg) {
  arch::Instruction in;
  in.op = arch::Opcode::Put;
  in.csr = csr;
  in.reg = reg;
  return encode_one(in);
}
uint32_t send(uint32_t address, uint32_t words, bool offset = false) {
  arch::Instruction in;
  in.op = offset ? arch::Opcode::SendOff : arch::Opcode::Send;
  in.words = words;
  in.address = offset ? 0 : address / 4;
  in.sctl = 1;
  return encode_one(in);
}
uint32_t delay(uint32_t events) {
  arch::Instruction in;
  in.op = arch::Opcode::Delay;
  in.events = events;
  return encode_one(in);
}
constexpr uint32_t kReturn = 0x43a00000u;  // br $m10

// Section 14's packet headers.
uint32_t route0(uint32_t tile) { return ((tile >> 1) << 16) | ((tile & 1) << 15); }
uint32_t route1(uint32_t tile) { return (tile & 1) << 31; }

struct Chunk {
  uint32_t tile_address, host_address, bytes;
};

std::vector<Chunk> chunks(uint32_t tile_address, uint32_t host_address, uint32_t bytes, uint32_t largest) {
  std::vector<Chunk> out;
  for (uint32_t done = 0; done < bytes;) {
    const uint32_t n = bytes - done >= 64 ? std::min(largest, (bytes - done) / 64 * 64) : bytes - done;
    out.push_back({tile_address + done, host_address + done, n});
    done += n;
  }
  return out;
}

uint32_t length_word(uint32_t tile, uint32_t host, uint32_t bytes) {
  const bool long_form = bytes >= 64;
  const uint32_t shift = long_form ? 6 : 2;
  return route1(tile) | ((host >> shift) << 4) | ((bytes >> shift) & 0xf);
}

// A host program: the wrapper around `body`.
std::vector<uint32_t> wrapped(uint32_t physical, const std::vector<uint32_t>& body) {
  std::vector<uint32_t> out = {setzi(8, 0x600 + ((physical & 0x3f) & ~2u)), put(0xa0, 8),
                               op_word(arch::Opcode::Sync, 7)};
  out.insert(out.end(), body.begin(), body.end());
  for (uint32_t w : {op_word(arch::Opcode::Sync, 7), setzi(8, 0x640), put(0xa0, 8), kReturn}) out.push_back(w);
  return out;
}

// One tile's image pieces placed at running addresses.
struct TileLayout {
  uint32_t physical = 0;
  std::vector<uint32_t> host_code;    // at kHostPrograms
  std::vector<uint32_t> descriptors;  // at kDescriptors: descriptors, then packet words
  std::vector<uint32_t> program;      // at kProgram

  uint32_t add_code(const std::vector<uint32_t>& words) {
    const uint32_t at = kHostPrograms + 4 * static_cast<uint32_t>(host_code.size());
    host_code.insert(host_code.end(), words.begin(), words.end());
    while (host_code.size() % 2) host_code.push_back(0);  // 8-byte aligned programs
    return at;
  }
  uint32_t add_data(const std::vector<uint32_t>& words) {
    const uint32_t at = kDescriptors + 4 * static_cast<uint32_t>(descriptors.size());
    descriptors.insert(descriptors.end(), words.begin(), words.end());
    return at;
  }
  void host_run(uint32_t descriptor, uint32_t code) {
    for (uint32_t w : {setzi(2, 1), setzi(3, descriptor), setzi(4, code), call(9, kHostRun)}) program.push_back(w);
  }
  void followers(uint32_t count, uint32_t row) {
    for (uint32_t w : {setzi(2, count), setzi(3, row), call(9, kRepeatCall)}) program.push_back(w);
  }
  // Host to tile: `bytes` from the slot into `destination` through the staging buffer.
  void receive(uint32_t destination, uint32_t host, uint32_t bytes) {
    std::vector<uint32_t> packet, body = {setzi(8, bytes / 4), put(0xa6, 8)};
    const auto parts = chunks(0x50180, host, bytes, 1024);
    for (size_t c = 0; c < parts.size(); ++c) {
      const bool last = c + 1 == parts.size();
      packet.push_back((last ? 0xec000200u : 0xe0000200u) | route0(physical) |
                       ((parts[c].tile_address - 0x50000) >> 5));
      packet.push_back(length_word(physical, parts[c].host_address, parts[c].bytes));
      body.push_back(c == 0 ? send(0x50008, 2) : send(0, 2, true));
    }
    body.push_back(op_word(arch::Opcode::Sync, 0));
    const uint32_t words_at = add_data(packet);
    const uint32_t control = bytes / 4 | 1u << 23 | static_cast<uint32_t>(packet.size()) << 24;
    host_run(add_data({destination, control, words_at}), add_code(wrapped(physical, body)));
  }
  // Tile to host: `bytes` at `source` into the slot, then the closing read.
  void transmit(uint32_t source, uint32_t host, uint32_t bytes) {
    std::vector<uint32_t> packet, body = {setzi(8, 1), put(0xa6, 8)};
    const auto parts = chunks(source, host, bytes, 256);
    for (size_t c = 0; c < parts.size(); ++c) {
      packet.push_back((parts[c].bytes >= 64 ? 0xa0000000u : 0x80000000u) | route0(physical));
      packet.push_back(length_word(physical, parts[c].host_address, parts[c].bytes));
      body.push_back(send(0x50008 + 8 * static_cast<uint32_t>(c), 2));
      body.push_back(send(parts[c].tile_address, parts[c].bytes / 4));
      if (parts[c].bytes / 4 < 18) body.push_back(delay(18 - parts[c].bytes / 4 - 1));
    }
    packet.push_back(0xcc000200u | route0(physical) | ((0x50160 - 0x50000) >> 5));
    packet.push_back(route1(physical));
    body.push_back(send(0x50008 + 8 * static_cast<uint32_t>(parts.size()), 2));
    body.push_back(op_word(arch::Opcode::Sync, 0));
    const uint32_t words_at = add_data(packet);
    const uint32_t control = 1u << 23 | static_cast<uint32_t>(packet.size()) << 24;
    host_run(add_data({0, control, words_at}), add_code(wrapped(physical, body)));
  }
  void sample(uint32_t address) {
    program.push_back(setzi(2, address));
    program.push_back(call(10, kSample));
  }
};

// The four output bindings a participating tile sends, one batch each: (tile address, bytes).
const std::vector<std::pair<uint32_t, uint32_t>> kOutputs = {
    {kResult, kResultBytes}, {0x58004, 4}, {kBuffer, 20}, {0x58008, 4}};

void kernel_steps(TileLayout& t) {
  t.sample(0x58004);
  t.sample(kBuffer);
  for (uint32_t w : {setzi(2, kProduct), setzi(3, kLeft), setzi(4, kRight), call(10, kGemm)}) t.program.push_back(w);
  t.sample(kBuffer + 4);
  for (uint32_t w : {setzi(2, kGelued), setzi(3, kProduct), setzi(4, kElements), call(10, kGelu)})
    t.program.push_back(w);
  t.sample(kBuffer + 8);
  for (uint32_t w :
       {setzi(2, kSum), setzi(3, kGelued), setzi(4, kRemote), setzi(5, 2), setzi(6, kElements), call(10, kReduce)})
    t.program.push_back(w);
  t.sample(kBuffer + 12);
  for (uint32_t w : {setzi(2, kResult), setzi(3, kSum), setzi(4, kResultBytes / 8 / 6), setzi(5, 0), call(10, kCopy)})
    t.program.push_back(w);
  t.sample(kBuffer + 16);
  t.sample(0x58008);
}

TileLayout tile_layout(uint32_t physical, int slot) {
  TileLayout t;
  t.physical = physical;
  const uint32_t follower = t.add_code({op_word(arch::Opcode::Sans, 1), op_word(arch::Opcode::Sync, 1), kReturn});
  if (slot < 0) {  // takes part in the 2 initialize and 9 run phases only
    t.followers(2, follower);
    t.followers(9, follower);
  } else {
    const uint32_t host = kSlotsBase + kSlot * static_cast<uint32_t>(slot);
    t.receive(kRight, host, kRightBytes);
    t.followers(1, follower);
    t.receive(kLeft, host, kLeftBytes);
    t.followers(1, follower);
    kernel_steps(t);
    for (size_t b = 0; b < kOutputs.size(); ++b) {
      if (b > 0) t.followers(1, follower);
      t.transmit(kOutputs[b].first, host, kOutputs[b].second);
    }
  }
  t.program.push_back(setzi(0, kComplete));
  t.program.push_back(0x43000000u);  // br $m0
  return t;
}

arch::HostSlice host_slice(uint32_t slot, uint64_t file_offset, uint64_t size) {
  return {1, uint64_t{kSlot} * slot, file_offset, size};
}

void add_host_exchange(arch::Application& app, const std::vector<uint32_t>& physical) {
  arch::HostExchange& h = app.host_exchange;
  h.startup_mark = 1;
  h.pages = {{0, 4096}, {1, uint64_t{kSlot} * kParticipants}};
  h.attach_order = {0, 1};
  arch::HostCall init{"initialize", 0, 2, {}, {}, 1, {kParticipants}, {}};
  arch::HostCall run{"run", 0, 2 * (1 + 4) - 1, {}, {}, 1, {kParticipants}, {}};
  uint64_t output_base = 0;
  for (size_t b = 0; b < kOutputs.size(); ++b) {
    for (uint32_t s = 0; s < kParticipants; ++s) {
      run.outputs.push_back(host_slice(s, output_base + uint64_t{s} * kOutputs[b].second, kOutputs[b].second));
    }
    output_base += uint64_t{kParticipants} * kOutputs[b].second;
    run.output_batch_ends.push_back(static_cast<uint32_t>(run.outputs.size()));
  }
  for (uint32_t s = 0; s < kParticipants; ++s) {
    init.inputs.push_back(host_slice(s, uint64_t{s} * kRightBytes, kRightBytes));
    run.inputs.push_back(host_slice(s, uint64_t{s} * kLeftBytes, kLeftBytes));
  }
  h.calls = {init, run};
  const std::vector<std::tuple<std::string, std::string, uint32_t, uint32_t>> outputs = {
      {"output.0", "f16", kResult, kResultBytes},
      {"profile.start-cycle", "u32", 0x58004, 4},
      {"profile.cycles", "u32", kBuffer, 20},
      {"profile.end-cycle", "u32", 0x58008, 4}};
  for (const auto& [name, dtype, address, bytes] : outputs) {
    arch::AppBinding b{name, dtype, {kParticipants * bytes / (dtype == "f16" ? 2 : 4)}, {}};
    for (uint32_t s = 0; s < kParticipants; ++s) b.slices.push_back({physical[s], address, uint64_t{s} * bytes, bytes});
    app.outputs.push_back(b);
  }
  app.outputs.push_back({"completion", "u32", {1}, {{physical[0], 0x58000, 0, 4}}});
  app.weights.push_back({"weight.0", "f16", {kParticipants * kRightBytes / 2}, {}});
  app.inputs.push_back({"input.0", "f16", {kParticipants * kLeftBytes / 2}, {}});
  for (uint32_t s = 0; s < kParticipants; ++s) {
    app.weights.back().slices.push_back({physical[s], kRight, uint64_t{s} * kRightBytes, kRightBytes});
    app.inputs.back().slices.push_back({physical[s], kLeft, uint64_t{s} * kLeftBytes, kLeftBytes});
  }
}

void add_profile_plan(arch::Application& app, uint32_t physical) {
  arch::TileProfilePlan plan{physical, {}};
  const char* kernels[] = {kGemmSymbol, "ipu_stack_gelu_tanh_approx_f16", "ipu_stack_reduce_sum_f16",
                           "ipu_stack_copy_u64"};
  for (uint32_t i = 0; i < 4; ++i) {
    arch::PlanStep s;
    s.step.local_index = i;
    s.step.phase = i;
    s.step.kind = arch::ProfileStepKind::Compute;
    s.step.kernel = kernels[i];
    plan.steps.push_back(s);
  }
  app.profile_tiles.push_back(plan);
}

arch::Application host_image(const std::vector<KernelChain>& chains) {
  const auto machine = arch::load_machine("ipu21-c600-t64");
  const arch::Topology topology(machine);
  arch::Application app;
  app.compiler_version = "ipu-stack (by hand, from IPU21-DEVICE.md)";
  app.host_exchange.command_page = 0;
  for (const auto& [name, address] :
       std::vector<std::pair<std::string, uint32_t>>{{"ipu_stack_static_start", kStart},
                                                     {"ipu_stack_static_sample_cycle", kSample},
                                                     {"ipu_stack_static_complete", kComplete},
                                                     {kGemmSymbol, kGemm},
                                                     {"ipu_stack_gelu_tanh_approx_f16", kGelu},
                                                     {"ipu_stack_reduce_sum_f16", kReduce},
                                                     {"ipu_stack_copy_u64", kCopy},
                                                     {"ipu_stack_static_host_run", kHostRun},
                                                     {"ipu_stack_static_repeat_call", kRepeatCall},
                                                     {"ipu_stack_static_copy_u32", kCopyU32}}) {
    app.debug_symbols.push_back({name, address});
  }
  app.debug_regions.push_back({arch::kDebugAllTiles, kStart, kLinkedEnd - kStart, "linked executable"});
  std::vector<uint32_t> physical(topology.tiles());
  for (uint32_t l = 0; l < topology.tiles(); ++l) physical[l] = topology.physical(l);
  std::vector<uint32_t> participants(physical.begin(), physical.begin() + kParticipants);
  std::sort(participants.begin(), participants.end());
  for (uint32_t logical = 0; logical < topology.tiles(); ++logical) {
    const auto rank = std::find(participants.begin(), participants.end(), physical[logical]);
    const int slot = rank == participants.end() ? -1 : static_cast<int>(rank - participants.begin());
    const TileLayout t = tile_layout(physical[logical], slot);
    arch::TileImage image;
    image.physical_tile = physical[logical];
    image.entry_point = 0x4c010;
    image.diagnostic_address = 0x58000;
    image.segments.push_back(words(0x4c010, {setzi(0, kStart), 0x43000000u}, 5));
    image.segments.push_back({kStart, kLinkedEnd - kStart, {}, 5});
    image.segments.push_back(words(kHostPrograms, t.host_code, 5));
    image.segments.push_back(words(kDescriptors, t.descriptors, 1));
    image.segments.push_back(words(0x58000, {0}, 3));
    image.segments.back().memory_size = 0x6e0;
    image.segments.push_back(words(kProgram, t.program, 5));
    if (slot >= 0) image.segments.push_back(segment(kRemote, chains[static_cast<size_t>(slot)].remote, 1));
    std::sort(image.segments.begin(), image.segments.end(),
              [](const arch::AppSegment& a, const arch::AppSegment& b) { return a.address < b.address; });
    app.debug_regions.push_back(
        {image.physical_tile, kProgram, static_cast<uint32_t>(t.program.size() * 4), "generated tile program"});
    app.debug_regions.push_back(
        {image.physical_tile, kHostPrograms, static_cast<uint32_t>(t.host_code.size() * 4), "host exchange program"});
    if (slot >= 0) add_profile_plan(app, image.physical_tile);
    app.tiles.push_back(std::move(image));
  }
  std::sort(app.tiles.begin(), app.tiles.end(),
            [](const arch::TileImage& a, const arch::TileImage& b) { return a.physical_tile < b.physical_tile; });
  std::sort(
      app.profile_tiles.begin(), app.profile_tiles.end(),
      [](const arch::TileProfilePlan& a, const arch::TileProfilePlan& b) { return a.physical_tile < b.physical_tile; });
  add_host_exchange(app, participants);
  app.entry_points.push_back({"run", 0, 0});
  return app;
}

std::string halves_file(const std::vector<KernelChain>& chains, std::vector<uint16_t> KernelChain::*part) {
  std::string out;
  for (const KernelChain& c : chains) {
    for (uint16_t h : c.*part) {
      out.push_back(static_cast<char>(h & 0xff));
      out.push_back(static_cast<char>(h >> 8));
    }
  }
  return out;
}

struct HostImage {
  std::string dir, image, weights, inputs;
  std::vector<KernelChain> chains;
};

HostImage write_host_image(const std::string& name) {
  HostImage h;
  h.dir = temp_dir(name);
  h.image = h.dir + "/model.ipuexe";
  h.weights = h.dir + "/weights.bin";
  h.inputs = h.dir + "/inputs.bin";
  // Slot order is physical order: chain s belongs to the participant of rank s.
  for (uint32_t s = 0; s < kParticipants; ++s) h.chains.push_back(kernel_chain_reference(1 + 10 * s));
  arch::write_application(host_image(h.chains), h.image);
  write_file(h.weights, halves_file(h.chains, &KernelChain::right));
  write_file(h.inputs, halves_file(h.chains, &KernelChain::left));
  return h;
}

uint16_t half_at(const std::string& bytes, size_t i) {
  return static_cast<uint16_t>(static_cast<uint8_t>(bytes.at(2 * i)) | static_cast<uint8_t>(bytes.at(2 * i + 1)) << 8);
}

TEST(DeviceStackHost, SimulateRunsTheCallsAsHostRunWouldAndTheOutputsMatchTheReference) {
  const HostImage h = write_host_image("stack_host");
  const auto r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/result",
                               "--input", "initialize=" + h.weights, "--input", "run=" + h.inputs, "--call-output",
                               "run=" + h.dir + "/run.bin", "--watch", "0:0x50180", "--watch", "0:0x61000"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("in host phases), 2 host calls"), std::string::npos) << r.out;
  // The staging word: the weights' first chunk in host phase 0, the input's in phase 2; the
  // weights' first word then reaches 0x61000 by the host-run helper's copy.
  EXPECT_NE(r.out.find("watch tile 0 0x50180: cycle "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host phase 0 (call initialize)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host phase 2 (call run)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("watch tile 0 0x61000: cycle "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel ipu_stack_static_copy_u32"), std::string::npos) << r.out;
  std::printf("figures: %s", r.out.c_str());  // the run's cycles and its host phases' share
  // The run call's file: output.0, the start samples, profile.cycles, the end samples (17.1);
  // completion, listed last, is never moved.
  const std::string run = read_file(h.dir + "/run.bin");
  ASSERT_EQ(run.size(), kParticipants * (kResultBytes + 4 + 20 + 4));
  for (uint32_t s = 0; s < kParticipants; ++s) {
    for (uint32_t i = 0; i < kElements; ++i) {
      ASSERT_EQ(half_at(run, s * kElements + i), h.chains[s].result[i]) << "slot " << s << " element " << i;
    }
  }
  EXPECT_EQ(read_file(h.dir + "/result/outputs/output.0.bin"), run.substr(0, kParticipants * kResultBytes));
  EXPECT_FALSE(std::filesystem::exists(h.dir + "/result/outputs/completion.bin"));
  // The profile is profile-extract's: each plan's four kernels, the samples the model's cycles.
  // A sample interval holds the kernel's argument set-up (6 cycles an instruction), its planner
  // cost, and the next sample's own launch (17.3: inside the interval), the same every time: so
  // the residue is one constant, and each kernel costs its formula exactly.
  const arch::Profile profile = arch::read_profile(h.dir + "/result/profile.lsprof");
  ASSERT_EQ(profile.tiles.size(), kParticipants);
  const uint64_t gemm = 294 + 4 * ((kColumns * kRows + 3) / 4 + (2 * 1063 + 3) / 4), gelu = 10 * kElements + 11,
                 reduce = 3 * 2 * kElements + 11, copy = kResultBytes / 8 + 288;
  const uint64_t formula[] = {gemm, gelu, reduce, copy}, setup[] = {4, 4, 6, 5};
  const uint64_t sample =
      profile.tiles[0].samples.at(0).end_cycle - profile.tiles[0].samples[0].start_cycle - gemm - 6 * 4;
  EXPECT_LT(sample, 200u);
  for (const arch::TileProfile& t : profile.tiles) {
    ASSERT_EQ(t.samples.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      std::printf("figures: tile %u %s: %llu cycles sampled, planner formula %llu\n", t.physical_tile,
                  profile.steps[t.samples[i].step].kernel.c_str(),
                  static_cast<unsigned long long>(t.samples[i].end_cycle - t.samples[i].start_cycle),
                  static_cast<unsigned long long>(formula[i]));
      EXPECT_EQ(t.samples[i].end_cycle - t.samples[i].start_cycle, formula[i] + 6 * setup[i] + sample)
          << "tile " << t.physical_tile << " step " << i;
    }
  }
}

TEST(DeviceStackHost, ImportedImageRunsToTheSameOutputsAndCycles) {
  const HostImage h = write_host_image("stack_host_import");
  auto r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/result",
                         "--input", "initialize=" + h.weights, "--input", "run=" + h.inputs, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string simulated = r.out;
  r = run_lockstep({"device", "import", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/model.capnp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"run", h.dir + "/model.capnp", "--input", "weight.0=" + h.weights, "--input", "input.0=" + h.inputs,
                    "--output-dir", h.dir + "/out", "--json", "--profile", h.dir + "/p.lsprof"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every tile's profile has its 11 host phases, each a host-exchange sample.
  const arch::Profile profile = arch::read_profile(h.dir + "/p.lsprof");
  ASSERT_EQ(profile.tiles.size(), 64u);
  for (const arch::TileProfile& t : profile.tiles) {
    const auto host = std::count_if(t.samples.begin(), t.samples.end(), [&](const arch::CycleSample& s) {
      return profile.steps[s.step].kernel == "host-exchange";
    });
    EXPECT_EQ(host, 11) << "tile " << t.physical_tile;
  }
  EXPECT_EQ(read_file(h.dir + "/out/output.0.bin"), read_file(h.dir + "/result/outputs/output.0.bin"));
  const auto cycles = [](const std::string& json) {
    const size_t at = json.find("\"total_cycles\"");
    return at == std::string::npos ? std::string() : json.substr(at, json.find_first_of(",}", at) - at);
  };
  EXPECT_FALSE(cycles(simulated).empty());
  EXPECT_EQ(cycles(r.out), cycles(simulated));
}

// scripts/host-run-runner.sh on this image, against a stand-in for `ipu-stack` written from
// section 17 (tests/support/ipu_stack_stand_in.py) that simulates underneath: the wrapper
// calls `host-run IMAGE BOOT CFG initialize run --input initialize=... --input run=...
// --output run=...` and `profile-extract`, and its folder is the simulated one exactly.
TEST(DeviceStackHost, TheHostRunWrapperRunsTheImageThroughTheStacksCommandLine) {
  const HostImage h = write_host_image("stack_host_wrapper");
  auto r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/simulated",
                         "--input", "initialize=" + h.weights, "--input", "run=" + h.inputs});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string inputs = h.dir + "/host-inputs", result = h.dir + "/wrapped";
  std::filesystem::create_directories(inputs);
  std::filesystem::create_directories(result);
  std::filesystem::copy_file(h.weights, inputs + "/initialize.bin");
  std::filesystem::copy_file(h.inputs, inputs + "/run.bin");
  std::filesystem::create_directories(h.dir + "/state");
  const std::string stand_in = h.dir + "/ipu-stack";
  write_file(stand_in, "#!/bin/sh\nexec python3 " + source_path("tests/support/ipu_stack_stand_in.py") + " \"$@\"\n");
  std::filesystem::permissions(stand_in, std::filesystem::perms::owner_all);
  const std::string command =
      "IPU_BOOTLOADER=" + h.dir + "/boot.elf IPU_CONFIGURATION=" + h.dir + "/card.ipucfg IPU_STACK=" + stand_in +
      " STAND_IN_MACHINE=ipu21-c600-t64 STAND_IN_STATE=" + h.dir + "/state STAND_IN_LOG=" + h.dir +
      "/log LOCKSTEP=" LOCKSTEP_BINARY_PATH " LOCKSTEP_IMAGE=" + h.image + " LOCKSTEP_RESULT_DIR=" + result +
      " LOCKSTEP_HOST_INPUTS=" + inputs + " LOCKSTEP_CLOCK_HZ=1500000000 sh " +
      source_path("scripts/host-run-runner.sh") + " > " + h.dir + "/out 2> " + h.dir + "/err";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(h.dir + "/err");
  EXPECT_EQ(read_file(h.dir + "/log"),
            "host-run " + h.image + " " + h.dir + "/boot.elf " + h.dir +
                "/card.ipucfg initialize run --input initialize=" + inputs + "/initialize.bin --input run=" + inputs +
                "/run.bin --output run=" + result + "/.host-run/run.bin\nprofile-extract " + h.image + " " + result +
                "/.host-run/run.bin -o " + result + "/profile.lsprof --clock-hz 1500000000\n");
  EXPECT_NE(read_file(h.dir + "/err").find("calls=2 hostRun=PASS"), std::string::npos) << read_file(h.dir + "/err");
  EXPECT_EQ(read_file(result + "/outputs/output.0.bin"), read_file(h.dir + "/simulated/outputs/output.0.bin"));
  r = run_lockstep({"crosscheck", "--simulated", h.dir + "/simulated", "--device", result, "-o", h.dir + "/report"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("error 0.0000%"), std::string::npos) << r.out;
}

TEST(DeviceStackHost, AnInputOfTheWrongSizeOrAnUnknownCallIsRefused) {
  const HostImage h = write_host_image("stack_host_bad");
  write_file(h.dir + "/short.bin", std::string(100, '\0'));
  auto r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/result",
                         "--input", "initialize=" + h.dir + "/short.bin", "--input", "run=" + h.inputs});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("host call initialize: expects 8192 input bytes, got 100"), std::string::npos) << r.err;
  r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/result", "--input",
                    "infer=" + h.inputs});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown host call infer"), std::string::npos) << r.err;
  r = run_lockstep({"device", "simulate", h.image, "--machine", "ipu21-c600-t64", "-o", h.dir + "/result", "--call",
                    "run", "--input", "run=" + h.inputs});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("host calls [run] take 9 host phases, the program runs 11"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(h.dir + "/result"));
  // A profile plan of 3 steps beside a profile.cycles slice of 5 words: profile-extract's refusal.
  arch::Application app = arch::read_application(h.image);
  app.profile_tiles[0].steps.pop_back();
  arch::write_application(app, h.dir + "/plan.ipuexe");
  r = run_lockstep({"device", "simulate", h.dir + "/plan.ipuexe", "--machine", "ipu21-c600-t64", "-o",
                    h.dir + "/result", "--input", "initialize=" + h.weights, "--input", "run=" + h.inputs,
                    "--call-output", "run=" + h.dir + "/run.bin"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("plan.ipuexe: profile.cycles: tile 0: its slice is not (3 steps + 1) x 4 bytes"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(h.dir + "/result"));
  EXPECT_FALSE(std::filesystem::exists(h.dir + "/run.bin"));
}

}  // namespace
}  // namespace lockstep::testing
