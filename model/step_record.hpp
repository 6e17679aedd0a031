#pragma once
// One executed step on one tile, kept when the run is profiled; sim/profile_builder.cpp
// turns a tile's records into the samples of a cycle profile (profile/profile.hpp).
#include <cstdint>
#include <memory>

#include "model/exchange_activities.hpp"

namespace lockstep::model {

enum class StepRole : uint8_t {
  Sync,             // a SyncStep
  Exchange,         // an ExchangeStep: from its CSR setup to the end of its row
  Kernel,           // a KernelStep's launch and cycles (consecutive equal calls merge)
  RepeatEntry,      // a RepeatStep's entry bookkeeping
  RepeatIteration,  // a RepeatStep's per-iteration bookkeeping (pointer updates, branch)
  Patch,            // a PatchStep
  Host,             // a HostStep: its wrapper, the wait for the host and the transfers
};

struct StepRecord {
  uint64_t start = 0;
  uint64_t end = 0;
  const void* step = nullptr;  // the arch step alternative executed (KernelStep, ...)
  StepRole role = StepRole::Sync;
  uint32_t epoch = 0;  // linear index of the Repeat iteration path
  uint32_t invocation = 0;
  uint32_t calls = 1;                                 // merged consecutive equal kernel calls
  uint64_t kernel_cycles = 0;                         // Kernel: the kernels' own cycles; the rest is the call sequence
  uint32_t position = 0;                              // exchange: the tile's index among the phase's tiles
  std::shared_ptr<const PhaseActivities> activities;  // exchange: the phase's activities
};

}  // namespace lockstep::model
