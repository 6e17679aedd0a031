#pragma once
// Where a sweep report came from: the capture and machine it measured (digests), the
// Lockstep builds that ran the sweep and wrote the report, and the whole program's cycles
// when the user gave them. Shown in index.html and kept as DIR/provenance.json, the file
// `lockstep report` reads back and `lockstep compile --selection` checks the capture against.
#include <cstdint>
#include <optional>
#include <string>

namespace lockstep::replay {

inline constexpr const char* kProvenanceFile = "provenance.json";

struct ReportProvenance {
  std::string capture;          // the capture's file name (no directories); empty: unknown
  std::string capture_fnv1a64;  // FNV-1a 64 of the capture file's bytes, "0x..."; empty: unknown
  std::string machine;          // machine name; empty: unknown
  std::string machine_digest;   // arch::machine_digest, 16 hex digits; empty: unknown
  std::string sweep_lockstep;   // "VERSION (commit C)" that measured results.csv; empty: unknown
  std::string report_lockstep;  // the build that wrote the report
  // The whole program's cycles under the reference policy (`--program-cycles`): the
  // denominator of "saved, % of the program". Unknown unless given.
  std::optional<uint64_t> program_cycles;
};

// "0.4.0 (commit 1a2b3c)".
std::string lockstep_build_text(const std::string& version, const std::string& commit);

// FNV-1a 64 of a file's bytes, "0x..." (arch::hex), as the sweep journal records it.
std::string file_fnv1a64(const std::string& path);

// The file name of a path: "out/demo/capture.capnp" -> "capture.capnp".
std::string base_name(const std::string& path);

// provenance.json's text: pretty-printed JSON, keys in a fixed order, unknowns as null.
std::string provenance_json_text(const ReportProvenance& provenance);
// Parses it back. InputError "FILE: what" on anything else.
ReportProvenance parse_provenance_json(const std::string& text, const std::string& file_name);
// DIR/provenance.json, or nothing when the folder has none.
std::optional<ReportProvenance> read_provenance(const std::string& dir);

}  // namespace lockstep::replay
