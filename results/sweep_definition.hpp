#pragma once
// A sweep definition (configs/sweeps/*.yaml): which configurations every phase is run
// with, the reference policy the comparisons measure against, and the max-row growth
// allowances K of the "max row grows by at most K bytes" comparison windows.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/compile.hpp"

namespace lockstep::replay {

// A configuration at one width, e.g. B1024 word32 (written "B1024") or B256 paired64
// (written "B256p", the name plots and tables use).
struct PointRef {
  std::string config;
  compiler::Width width = compiler::Width::Word32;
  std::string name() const;  // "B1024" or "B256p"
  bool operator==(const PointRef&) const = default;
};

// Parses "B1024" (word32) or "B1024p" (paired64). InputError "<what>: ..." on a name
// that is not latency | automatic | remaining-combined | S<W> | B<W>, optionally + p.
PointRef parse_point_ref(const std::string& text, const std::string& what);

struct SweepDefinition {
  std::string file;                            // where it was read from (for messages)
  std::vector<std::string> configurations;     // in file order: the order of results.csv rows
  PointRef reference;                          // the policy comparisons measure against
  std::vector<uint64_t> max_row_growth_bytes;  // K of each growth window, in file order
};

inline constexpr const char* kDefaultSweep = "configs/sweeps/frontier.yaml";

// `source`: a path on disk or an embedded config (configs/sweeps/frontier.yaml).
// InputError "file:line: key.path: what" for unknown keys, bad names, duplicates, or a
// reference that is not one of the configurations.
SweepDefinition load_sweep_definition(const std::string& source);
SweepDefinition parse_sweep_definition(const std::string& text, const std::string& file_name);

}  // namespace lockstep::replay
