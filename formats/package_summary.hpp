#pragma once
// A package at a glance: what `lockstep inspect` prints. Counting only, no machine needed.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "formats/package.hpp"

namespace lockstep::arch {

// Steps by kind, in step_kind_name order: sync, exchange, kernel, repeat, patch, host. Repeat
// bodies are counted once (static program size, not executed steps).
using StepCounts = std::array<uint64_t, std::variant_size_v<decltype(Step::kind)>>;
inline constexpr std::array<const char*, std::tuple_size_v<StepCounts>> kStepKindNames = {
    "sync", "exchange", "kernel", "repeat", "patch", "host"};

struct TileSummary {
  uint32_t tile = 0;
  uint32_t table_bytes = 0;
  uint64_t segment_bytes = 0;
  size_t segments = 0;
  StepCounts steps{};
};

struct PackageSummary {
  std::vector<TileSummary> tiles;  // in package order
  uint32_t max_table_bytes = 0;
  uint64_t total_table_bytes = 0;
  StepCounts total_steps{};
  StepCounts max_steps_per_tile{};
};

PackageSummary summarize_package(const Package& package);
StepCounts count_steps(const std::vector<Step>& steps);

}  // namespace lockstep::arch
