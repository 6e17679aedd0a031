// Canonical YAML form of a package: fixed key order, hex addresses and words, decimal sizes
// and counts, every string double-quoted (the workload text a block scalar where it can be).
// YAML -> Cap'n Proto -> YAML gives the same bytes.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <span>
#include <sstream>

#include "formats/package_io.hpp"
#include "io/atomic_file.hpp"
#include "io/hex.hpp"
#include "io/yaml_writer.hpp"

namespace lockstep::arch {

namespace {

constexpr size_t kWordsPerLine = 8;

std::string word(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", value);
  return buf;
}

std::string quoted(const std::string& text) { return yaml_quoted(text); }

std::string hex_bytes(std::span<const uint8_t> bytes) {
  std::string out = "\"";
  char buf[4];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out + "\"";
}

// A flow list of hex words; long lists wrap, continuation lines indented by `indent`.
std::string word_list(const std::vector<uint32_t>& words, size_t indent) {
  if (words.size() <= kWordsPerLine) {
    std::string out = "[";
    for (size_t i = 0; i < words.size(); ++i) out += (i ? ", " : "") + word(words[i]);
    return out + "]";
  }
  std::string out = "[";
  for (size_t i = 0; i < words.size(); ++i) {
    if (i % kWordsPerLine == 0) out += "\n" + std::string(indent, ' ');
    out += word(words[i]);
    out += i + 1 < words.size() ? (i % kWordsPerLine == kWordsPerLine - 1 ? "," : ", ") : "]";
  }
  return out;
}

std::vector<uint32_t> bytes_to_words(std::span<const uint8_t> bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  for (size_t i = 0; i < words.size(); ++i) {
    words[i] = uint32_t(bytes[4 * i]) | uint32_t(bytes[4 * i + 1]) << 8 | uint32_t(bytes[4 * i + 2]) << 16 |
               uint32_t(bytes[4 * i + 3]) << 24;
  }
  return words;
}

// True when `text` reads back exactly from a literal block scalar indented by two: printable
// (or UTF-8) lines and at most one final newline, whose last line is not empty.
bool block_safe(const std::string& text) {
  if (text.empty() || text.front() == '\n') return false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c != '\n' && (u < 0x20 || u == 0x7f)) return false;
  }
  const size_t end = text.back() == '\n' ? text.size() - 1 : text.size();
  return end > 0 && text[end - 1] != '\n';
}

// The workload text as a literal block scalar (`|2`, or `|2-` without a final newline) where
// that reads back exactly, else as one double-quoted string.
std::string workload_scalar(const std::string& text) {
  if (!block_safe(text)) return quoted(text) + "\n";
  const bool final_newline = text.back() == '\n';
  std::string out = final_newline ? "|2\n" : "|2-\n";
  size_t start = 0;
  const size_t end = final_newline ? text.size() - 1 : text.size();
  while (start <= end) {
    const size_t stop = std::min(text.find('\n', start), end);
    const std::string line = text.substr(start, stop - start);
    out += (line.empty() ? "" : "  " + line) + "\n";
    start = stop + 1;
  }
  return out;
}

class Writer {
 public:
  std::string package(const Package& p) {
    out_ << "version: " << p.version << "\n";
    out_ << "machine: {name: " << quoted(p.machine_name) << ", digest: " << quoted(p.machine_digest) << "}\n";
    if (!p.workload.empty()) out_ << "workload: " << workload_scalar(p.workload);
    out_ << "phases:" << (p.phases.empty() ? " []" : "") << "\n";
    for (const Phase& ph : p.phases) {
      out_ << "  - {id: " << ph.id << ", label: " << quoted(ph.label) << ", execution_count: " << ph.execution_count
           << ", operation: " << quoted(ph.operation) << "}\n";
    }
    out_ << "tiles:" << (p.tiles.empty() ? " []" : "") << "\n";
    for (const TileProgram& t : p.tiles) tile(t);
    out_ << "bindings:" << (p.bindings.empty() ? " []" : "") << "\n";
    for (const Binding& b : p.bindings) {
      out_ << "  - name: " << quoted(b.name) << "\n    kind: " << binding_kind_name(b.kind) << "\n";
      if (b.element != ElementType::Bytes) {
        out_ << "    element: " << (b.element == ElementType::Float16 ? "float16" : "float32") << "\n    shape: [";
        for (size_t d = 0; d < b.shape.size(); ++d) out_ << (d ? ", " : "") << b.shape[d];
        out_ << "]\n";
      }
      out_ << "    slices:" << (b.slices.empty() ? " []" : "") << "\n";
      for (const Slice& s : b.slices) {
        out_ << "      - {tile: " << s.tile << ", address: " << hex(s.address) << ", bytes: " << s.bytes << "}\n";
      }
    }
    out_ << "expectations:" << (p.expectations.empty() ? " []" : "") << "\n";
    for (const Expectation& e : p.expectations) {
      out_ << "  - {tile: " << e.tile << ", address: " << hex(e.address);
      if (e.digest) {
        out_ << ", size: " << e.size << ", digest: " << hex(*e.digest) << "}\n";
      } else {
        out_ << ", bytes: " << hex_bytes(e.bytes) << "}\n";
      }
    }
    if (p.host != HostSession{}) host(p.host);
    return out_.str();
  }

 private:
  void tile(const TileProgram& t) {
    out_ << "  - tile: " << t.tile << "\n";
    if (t.table.address != 0 || t.table.size != 0) {
      out_ << "    table: {address: " << hex(t.table.address) << ", size: " << t.table.size << "}\n";
    }
    out_ << "    segments:" << (t.segments.empty() ? " []" : "") << "\n";
    for (const Segment& s : t.segments) {
      out_ << "      - address: " << hex(s.address) << "\n";
      switch (s.fill) {
        case FillKind::Bytes:
          if (s.bytes.size() % 4 == 0) {
            out_ << "        words: " << word_list(bytes_to_words(s.bytes), 10) << "\n";
          } else {
            out_ << "        bytes: " << hex_bytes(s.bytes) << "\n";
          }
          break;
        case FillKind::Zero:
          out_ << "        size: " << s.size << "\n        fill: zero\n";
          break;
        case FillKind::Tokens:
          out_ << "        size: " << s.size << "\n        fill: {tokens: " << s.token_seed << "}\n";
          break;
      }
    }
    out_ << "    steps:" << (t.steps.empty() ? " []" : "") << "\n";
    steps(t.steps, 6);
  }

  void steps(const std::vector<Step>& list, size_t indent) {
    const std::string pad(indent, ' ');
    for (const Step& step : list) {
      out_ << pad << "- ";
      std::visit([&](const auto& v) { this->step(v, indent); }, step.kind);
    }
  }

  void step(const SyncStep& s, size_t) { out_ << "sync: " << s.zone << "\n"; }

  void step(const ExchangeStep& e, size_t) {
    out_ << "exchange: {phase: " << e.phase;
    if (e.row_address) out_ << ", row: " << hex(*e.row_address);
    out_ << ", incoming_base: " << hex(e.incoming_base);
    if (e.incoming_mux) out_ << ", incoming_mux: " << hex(*e.incoming_mux);
    if (e.incoming_format != 0) out_ << ", incoming_format: " << e.incoming_format;
    if (e.incoming_muxpair) out_ << ", incoming_muxpair: " << hex(*e.incoming_muxpair);
    out_ << "}\n";
  }

  void step(const KernelStep& k, size_t) {
    out_ << "kernel: {name: " << quoted(k.name) << ", operands: [";
    for (size_t i = 0; i < k.operands.size(); ++i) {
      out_ << (i ? ", " : "");
      if (k.operands[i].indirect) {
        out_ << "{pointer: " << hex(k.operands[i].address);
        if (k.operands[i].offset != 0) out_ << ", offset: " << k.operands[i].offset;
        out_ << "}";
      } else {
        out_ << hex(k.operands[i].address);
      }
    }
    out_ << "], scalars: [";
    for (size_t i = 0; i < k.scalars.size(); ++i) out_ << (i ? ", " : "") << k.scalars[i];
    out_ << "]}\n";
  }

  void step(const RepeatStep& r, size_t indent) {
    const std::string pad(indent + 4, ' ');
    out_ << "repeat:\n" << pad << "count: " << r.count << "\n" << pad << "pointers: [";
    for (size_t i = 0; i < r.pointers.size(); ++i) {
      out_ << (i ? ", " : "") << "{address: " << hex(r.pointers[i].address) << ", stride: " << r.pointers[i].stride
           << "}";
    }
    out_ << "]\n" << pad << "body:" << (r.body.empty() ? " []" : "") << "\n";
    steps(r.body, indent + 6);
  }

  void step(const PatchStep& p, size_t indent) {
    const std::string pad(indent + 4, ' ');
    out_ << "patch:\n"
         << pad << "method: " << patch_method_name(p.method) << "\n"
         << pad << "entries:" << (p.entries.empty() ? " []" : "") << "\n";
    for (const PatchEntry& e : p.entries) {
      out_ << pad << "  - word: " << hex(e.word_address) << "\n"
           << pad << "    values: " << word_list(e.values, indent + 10) << "\n";
    }
  }

  void step(const HostStep& h, size_t indent) {
    const std::string pad(indent + 4, ' ');
    out_ << "host:\n" << pad << "transfers:" << (h.transfers.empty() ? " []" : "") << "\n";
    for (const HostTransfer& t : h.transfers) {
      out_ << pad << "  - {to: " << (t.direction == HostDirection::ToTile ? "tile" : "host")
           << ", tile_address: " << hex(t.tile_address) << ", host_address: " << hex(t.host_address)
           << ", bytes: " << t.bytes << "}\n";
    }
  }

  void host(const HostSession& h) {
    out_ << "host:\n  arena_bytes: " << h.arena_bytes << "\n  command_address: " << hex(h.command_address)
         << "\n  calls:" << (h.calls.empty() ? " []" : "") << "\n";
    for (const HostCallSpec& c : h.calls) {
      out_ << "    - name: " << quoted(c.name) << "\n      command: " << c.command << "\n      phases: " << c.phases
           << "\n";
      host_slices("inputs", c.inputs);
      host_slices("outputs", c.outputs);
      out_ << "      input_batch_ends: " << count_list(c.input_batch_ends)
           << "\n      output_batch_ends: " << count_list(c.output_batch_ends)
           << "\n      input_bindings: " << name_list(c.input_bindings)
           << "\n      output_bindings: " << name_list(c.output_bindings) << "\n";
    }
  }

  void host_slices(const char* key, const std::vector<HostFileSlice>& slices) {
    out_ << "      " << key << ":" << (slices.empty() ? " []" : "") << "\n";
    for (const HostFileSlice& s : slices) {
      out_ << "        - {host_address: " << hex(s.host_address) << ", file_offset: " << s.file_offset
           << ", bytes: " << s.bytes << "}\n";
    }
  }

  static std::string count_list(const std::vector<uint32_t>& counts) {
    std::string out = "[";
    for (size_t i = 0; i < counts.size(); ++i) out += (i ? ", " : "") + std::to_string(counts[i]);
    return out + "]";
  }

  static std::string name_list(const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quoted(names[i]);
    return out + "]";
  }

  std::ostringstream out_;
};

}  // namespace

const char* fill_kind_name(FillKind kind) {
  switch (kind) {
    case FillKind::Bytes:
      return "bytes";
    case FillKind::Zero:
      return "zero";
    case FillKind::Tokens:
      return "tokens";
  }
  return "?";
}

const char* patch_method_name(PatchMethod method) {
  switch (method) {
    case PatchMethod::Helper:
      return "helper";
    case PatchMethod::Bulk:
      return "bulk";
    case PatchMethod::Setup:
      return "setup";
  }
  return "?";
}

const char* binding_kind_name(BindingKind kind) {
  switch (kind) {
    case BindingKind::Input:
      return "input";
    case BindingKind::Output:
      return "output";
    case BindingKind::Weight:
      return "weight";
  }
  return "?";
}

const char* step_kind_name(const Step& step) {
  static constexpr const char* kNames[] = {"sync", "exchange", "kernel", "repeat", "patch", "host"};
  static_assert(std::size(kNames) == std::variant_size_v<decltype(Step::kind)>);
  return kNames[step.kind.index()];
}

std::string package_to_yaml(const Package& package) { return Writer().package(package); }

void write_package_yaml(const Package& package, const std::string& path) {
  write_file_atomically(path, package_to_yaml(package));
}

}  // namespace lockstep::arch
