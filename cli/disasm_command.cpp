// `lockstep disasm`: decode instruction words given on the command line (exchange row and
// supervisor words), or one tile's row for one phase straight out of a package's SRAM image.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/instruction.hpp"
#include "cli/command_registry.hpp"
#include "cli/disasm_code.hpp"
#include "cli/options.hpp"
#include "formats/package.hpp"
#include "formats/token.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace disasm_command_local {}
using namespace disasm_command_local;
namespace disasm_command_local {

struct DisasmOptions {
  std::vector<std::string> words;
  std::string package;
  std::optional<uint32_t> tile;
  std::optional<uint32_t> phase;
  bool code = false;
  uint32_t invocations = 1;
  bool json = false;
};

std::string hex8(uint32_t word) {
  char text[12];
  std::snprintf(text, sizeof text, "%08x", word);
  return text;
}

uint32_t parse_word(const std::string& text, size_t index) {
  std::string digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits = digits.substr(2);
  }
  bool ok = !digits.empty() && digits.size() <= 8;
  uint32_t value = 0;
  for (const char ch : digits) {
    int nibble = -1;
    if (ch >= '0' && ch <= '9') nibble = ch - '0';
    if (ch >= 'a' && ch <= 'f') nibble = ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') nibble = ch - 'A' + 10;
    ok = ok && nibble >= 0;
    value = (value << 4) | static_cast<uint32_t>(nibble & 15);
  }
  if (!ok) {
    throw InputError("--words: byte offset " + std::to_string(index * 4) + ": '" + text + "' is not a 32-bit hex word");
  }
  return value;
}

// Decodes every word in order; a row end does not stop it, so trailing words are shown too.
std::vector<arch::DecodedInstruction> decode_all(std::span<const uint32_t> words) {
  std::vector<arch::DecodedInstruction> out;
  for (size_t i = 0; i < words.size(); i += out.back().word_count) {
    out.push_back(arch::decode(words, i));
  }
  return out;
}

void print(std::span<const uint32_t> words, const std::vector<arch::DecodedInstruction>& row, bool json) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  size_t index = 0;
  for (const auto& d : row) {
    if (json) {
      nlohmann::ordered_json item;
      item["offset"] = index * 4;
      item["words"] = nlohmann::ordered_json::array();
      for (uint32_t k = 0; k < d.word_count; ++k) item["words"].push_back(hex8(words[index + k]));
      item["op"] = arch::mnemonic(d.instruction.op);
      item["fields"] = nlohmann::ordered_json::object();
      for (const auto& field : arch::fields_of(d.instruction)) {
        item["fields"][field.name] = field.value;
      }
      array.push_back(std::move(item));
    } else {
      std::string raw = hex8(words[index]);
      if (d.word_count == 2) raw += " " + hex8(words[index + 1]);
      char prefix[48];
      std::snprintf(prefix, sizeof prefix, "%6zu  %-17s  ", index * 4, raw.c_str());
      std::cout << prefix << arch::describe(d.instruction) << "\n";
    }
    index += d.word_count;
  }
  if (json) std::cout << json_text(array) << "\n";
}

const arch::ExchangeStep* find_exchange(const std::vector<arch::Step>& steps, uint32_t phase) {
  for (const auto& step : steps) {
    if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
      if (exchange->phase == phase) return exchange;
    } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
      if (const auto* inner = find_exchange(repeat->body, phase)) return inner;
    }
  }
  return nullptr;
}

// The 32-bit word the tile's SRAM image holds at `address`, if a segment covers it.
std::optional<uint32_t> word_at(const arch::TileProgram& program, uint32_t address) {
  for (const auto& segment : program.segments) {
    if (address < segment.address || uint64_t{address} + 4 > uint64_t{segment.address} + segment.size) {
      continue;
    }
    switch (segment.fill) {
      case arch::FillKind::Zero:
        return 0u;
      case arch::FillKind::Tokens:
        return arch::payload_token(segment.token_seed, program.tile, address);
      case arch::FillKind::Bytes: {
        const size_t at = address - segment.address;
        if (at + 4 > segment.bytes.size()) return std::nullopt;
        return static_cast<uint32_t>(segment.bytes[at]) | static_cast<uint32_t>(segment.bytes[at + 1]) << 8 |
               static_cast<uint32_t>(segment.bytes[at + 2]) << 16 | static_cast<uint32_t>(segment.bytes[at + 3]) << 24;
      }
    }
  }
  return std::nullopt;
}

int disasm_words(const DisasmOptions& options) {
  std::vector<uint32_t> words;
  for (size_t i = 0; i < options.words.size(); ++i) words.push_back(parse_word(options.words[i], i));
  std::vector<arch::DecodedInstruction> row;
  try {
    row = decode_all(words);
  } catch (const arch::DecodeError& e) {
    throw InputError(std::string("--words: ") + e.what());
  }
  print(words, row, options.json);
  return kExitOk;
}

int disasm_package(const DisasmOptions& options) {
  const arch::Package package = read_package_input(options.package);
  const std::string where =
      options.package + ": tile " + std::to_string(*options.tile) + ": phase " + std::to_string(*options.phase);
  const arch::TileProgram* program = nullptr;
  for (const auto& candidate : package.tiles) {
    if (candidate.tile == *options.tile) program = &candidate;
  }
  if (program == nullptr) throw InputError(where + ": the package has no program for this tile");
  const arch::ExchangeStep* step = find_exchange(program->steps, *options.phase);
  if (step == nullptr) throw InputError(where + ": the tile has no exchange step in this phase");
  if (!step->row_address) {
    // An inactive tile only joins the barrier (sans 0; sync 1): there is no row to show.
    if (options.json) {
      std::cout << "[]\n";
    } else {
      std::cout << "# tile " << *options.tile << " phase " << *options.phase
                << ": no row (the tile takes part in the barrier only)\n";
    }
    return kExitOk;
  }
  const uint32_t row_address = *step->row_address;
  if (row_address % 8 != 0) {
    throw InputError(where + ": row_address " + hex8(row_address) + " is not 8-byte aligned");
  }
  // Read words until the row's br $m10, or until the SRAM image stops covering them.
  std::vector<uint32_t> words;
  std::vector<arch::DecodedInstruction> row;
  const auto fetch = [&]() {
    const uint32_t address = row_address + static_cast<uint32_t>(words.size() * 4);
    const auto word = word_at(*program, address);
    if (!word) {
      throw InputError(where + ": row at 0x" + hex8(row_address) + ": byte offset " + std::to_string(words.size() * 4) +
                       ": no segment holds this word (row without br $m10)");
    }
    words.push_back(*word);
  };
  for (size_t next = 0;; next += row.back().word_count) {
    fetch();
    // A sendpicp (top nibble f) at an even index needs its payload word before decoding.
    if ((words[next] & 0xf0000000u) == 0xf0000000u && next % 2 == 0) fetch();
    try {
      row.push_back(arch::decode_row_word(words, next));
    } catch (const arch::DecodeError& e) {
      throw InputError(where + ": row at 0x" + hex8(row_address) + ": " + e.what());
    }
    if (row.back().instruction.op == arch::Opcode::Return) break;
  }
  if (!options.json) {
    std::cout << "# tile " << *options.tile << " phase " << *options.phase << ": row at 0x" << hex8(row_address) << ", "
              << words.size() * 4 << " bytes\n";
  }
  print(words, row, options.json);
  return kExitOk;
}

const CommandRegistration registration{
    "disasm", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("disasm",
                             "Disassemble IPU21 instruction words (docs/ipu21-exchange.md section 4).\n"
                             "  lockstep disasm --words 41800003 7fec0003 43a00000\n"
                             "  lockstep disasm --words 19870000 438080a4 18a18000\n"
                             "  lockstep disasm PACKAGE --tile T --phase P\n"
                             "  lockstep disasm PACKAGE --tile T --code\n"
                             "--words decodes every word given, exchange row instructions and the supervisor words\n"
                             "(setzi, add, and, shl, ld32, st32, put, get, br, call, brz, sync, sans, trap). The\n"
                             "second form reads logical tile T's row for phase P out of the package's SRAM image\n"
                             "(as stored, before any patch) up to its `br $m10`. One instruction per line: byte\n"
                             "offset from the first word, raw word(s), mnemonic and fields. Counts are shown as\n"
                             "events/words (the encoded field + 1); addresses are word (item) addresses; registers\n"
                             "print as $mN; mux values are named (tile N, host endpoint 0xN, neutral).\n"
                             "The third form prints tile T's supervisor code as the simulator executes it: the\n"
                             "steps lowered to IPU21 supervisor instructions (docs/supervisor-code.md), one per line\n"
                             "with its address, the runtime's and the kernels' symbols as labels and, after `;`, the\n"
                             "step each sequence lowers. --invocations N lowers the program's N-times loop too.\n"
                             "The package is validated first, as `run` validates it (a failure is exit 2).\n"
                             "A word that is no instruction, or in a package row a supervisor word, is bad input\n"
                             "(exit 2) and names its byte offset.");
      auto options = std::make_shared<DisasmOptions>();
      cmd->add_option("PACKAGE", options->package, "package file (Cap'n Proto or YAML)");
      cmd->add_option("--words", options->words, "instruction words in hex (0x prefix optional)")->expected(1, -1);
      cmd->add_option("--tile", options->tile, "logical tile id (with PACKAGE)");
      cmd->add_option("--phase", options->phase, "phase id (with PACKAGE)");
      cmd->add_flag("--code", options->code, "print the tile's supervisor code instead of a row (with PACKAGE --tile)");
      cmd->add_option("--invocations", options->invocations, "with --code: the program's invocation count (default 1)")
          ->check(CLI::Range(1u, 1u << 20));
      cmd->add_flag("--json", options->json, "print a JSON array of {offset, words, op, fields} objects");
      add_common_options(*cmd);
      return [options]() {
        const bool has_words = !options->words.empty();
        const bool has_package = !options->package.empty();
        if (has_words == has_package) {
          throw InputError("disasm: give either --words HEX... or PACKAGE --tile T --phase P");
        }
        if (has_words) {
          if (options->tile || options->phase) {
            throw InputError("disasm: --tile and --phase go with PACKAGE, not with --words");
          }
          return disasm_words(*options);
        }
        if (options->code) {
          if (!options->tile || options->phase) {
            throw InputError("disasm: " + options->package + ": --code takes --tile and no --phase");
          }
          return disasm_code(read_package_input(options->package), options->package, *options->tile,
                             options->invocations, options->json);
        }
        if (!options->tile || !options->phase) {
          throw InputError("disasm: " + options->package + ": --tile and --phase are required");
        }
        return disasm_package(*options);
      };
    }};

}  // namespace disasm_command_local
}  // namespace lockstep::cli
