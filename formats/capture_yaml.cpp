// YAML form of a capture, for small hand-written cases and for reading a capture as text.
#include <cstdio>
#include <sstream>

#include "formats/capture.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/yaml_reader.hpp"
#include "io/yaml_writer.hpp"

namespace lockstep::arch {
namespace {

std::string item_path(const std::string& base, size_t index) { return base + "[" + std::to_string(index) + "]"; }

Transfer parse_transfer(const YAML::Node& node, const std::string& file, const std::string& path, uint32_t iterations) {
  YamlMap map(node, file, path);
  Transfer t;
  t.source_tile = map.required_unsigned<uint32_t>("source_tile");
  const auto addresses = map.list("source_addresses");
  for (size_t i = 0; i < addresses.size(); ++i) {
    t.source_addresses.push_back(static_cast<uint32_t>(
        yaml_unsigned(addresses[i], file, item_path(map.key_path("source_addresses"), i), UINT32_MAX)));
  }
  if (t.source_addresses.size() != iterations) {
    yaml_fail(file, map.node()["source_addresses"], map.key_path("source_addresses"),
              std::to_string(t.source_addresses.size()) + " addresses, expected one per iteration (" +
                  std::to_string(iterations) + ")");
  }
  const auto destinations = map.list("destinations");
  for (size_t i = 0; i < destinations.size(); ++i) {
    YamlMap dest(destinations[i], file, item_path(map.key_path("destinations"), i));
    Destination d;
    d.tile = dest.required_unsigned<uint32_t>("tile");
    d.address = dest.required_unsigned<uint32_t>("address");
    dest.finish();
    t.destinations.push_back(d);
  }
  t.words = map.required_unsigned<uint32_t>("words");
  t.allow_paired = map.has("allow_paired") ? map.boolean("allow_paired") : false;
  map.finish();
  return t;
}

CapturePhase parse_phase(const YAML::Node& node, const std::string& file, const std::string& path) {
  YamlMap map(node, file, path);
  CapturePhase phase;
  phase.id = map.required_unsigned<uint32_t>("id");
  phase.label = map.string("label");
  phase.execution_count = map.optional_unsigned<uint32_t>("execution_count", 1);
  phase.operation = map.optional_string("operation", "");
  phase.iterations = map.optional_unsigned<uint32_t>("iterations", 1);
  if (phase.iterations == 0) {
    yaml_fail(file, map.node()["iterations"], map.key_path("iterations"), "must be at least 1");
  }
  const auto transfers = map.list("transfers");
  phase.transfers.reserve(transfers.size());
  for (size_t i = 0; i < transfers.size(); ++i) {
    phase.transfers.push_back(
        parse_transfer(transfers[i], file, item_path(map.key_path("transfers"), i), phase.iterations));
  }
  map.finish();
  return phase;
}

std::string quoted(const std::string& text) { return yaml_quoted(text); }

}  // namespace

Capture parse_capture_yaml(const std::string& text, const std::string& file_name) {
  YamlMap root(parse_yaml_text(text, file_name), file_name, "");
  Capture capture;
  capture.version = root.required_unsigned<uint32_t>("version");
  if (capture.version != kCaptureVersion) {
    yaml_fail(file_name, root.node()["version"], "version",
              std::to_string(capture.version) + " is not supported (this build reads " +
                  std::to_string(kCaptureVersion) + ")");
  }
  capture.machine_name = root.string("machine");
  const auto phases = root.list("phases");
  for (size_t i = 0; i < phases.size(); ++i) {
    capture.phases.push_back(parse_phase(phases[i], file_name, item_path("phases", i)));
  }
  root.finish();
  return capture;
}

std::string capture_to_yaml(const Capture& capture) {
  std::ostringstream out;
  out << "# Lockstep capture (docs/formats.md, section Captures)\n";
  out << "version: " << capture.version << "\n";
  out << "machine: " << quoted(capture.machine_name) << "\n";
  if (capture.phases.empty()) {
    out << "phases: []\n";
    return out.str();
  }
  out << "phases:\n";
  for (const auto& phase : capture.phases) {
    out << "  - id: " << phase.id << "\n";
    out << "    label: " << quoted(phase.label) << "\n";
    out << "    execution_count: " << phase.execution_count << "\n";
    out << "    operation: " << quoted(phase.operation) << "\n";
    out << "    iterations: " << phase.iterations << "\n";
    if (phase.transfers.empty()) {
      out << "    transfers: []\n";
      continue;
    }
    out << "    transfers:\n";
    for (const auto& t : phase.transfers) {
      out << "      - {source_tile: " << t.source_tile << ", source_addresses: [";
      for (size_t i = 0; i < t.source_addresses.size(); ++i) {
        out << (i ? ", " : "") << hex(t.source_addresses[i]);
      }
      out << "], destinations: [";
      for (size_t i = 0; i < t.destinations.size(); ++i) {
        out << (i ? ", " : "") << "{tile: " << t.destinations[i].tile << ", address: " << hex(t.destinations[i].address)
            << "}";
      }
      out << "], words: " << t.words << ", allow_paired: " << (t.allow_paired ? "true" : "false") << "}\n";
    }
  }
  return out.str();
}

void write_capture_yaml(const Capture& capture, const std::string& path) {
  write_file_atomically(path, capture_to_yaml(capture));
}

}  // namespace lockstep::arch
