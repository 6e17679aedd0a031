#include "cli/disasm_code.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <span>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace disasm_code_local {}
using namespace disasm_code_local;
namespace disasm_code_local {

std::string site_text(const arch::CodeSite& site) {
  using arch::SiteRole;
  switch (site.role) {
    case SiteRole::Sync:
      return "step: sync";
    case SiteRole::Exchange:
      return "step: exchange phase " + std::to_string(std::get<arch::ExchangeStep>(site.step->kind).phase);
    case SiteRole::Kernel:
      return "step: kernel " + std::get<arch::KernelStep>(site.step->kind).name;
    case SiteRole::Patch:
      return "step: patch";
    case SiteRole::Host:
      return "step: host phase, " + std::to_string(std::get<arch::HostStep>(site.step->kind).transfers.size()) +
             " transfers";
    case SiteRole::RepeatEntry:
      return "step: repeat x" + std::to_string(std::get<arch::RepeatStep>(site.step->kind).count);
    case SiteRole::RepeatIteration:
      return "repeat: pointers and count";
    case SiteRole::RepeatBody:
      return "repeat: body";
    case SiteRole::RepeatExit:
      return "repeat: end";
    case SiteRole::Barrier:
      if (std::holds_alternative<arch::HostStep>(site.step->kind)) return "barrier with the host";
      return site.exchange ? "barrier of phase " + std::to_string(site.phase) : "barrier";
    case SiteRole::RowCall:
      return "the exchange row";
    case SiteRole::InvocationEnd:
      return "invocation ends";
    case SiteRole::Halt:
      return "halt";
  }
  return "";
}

std::string hex8(uint32_t word) {
  char text[12];
  std::snprintf(text, sizeof text, "%08x", word);
  return text;
}

}  // namespace disasm_code_local

int disasm_code(const arch::Package& package, const std::string& file, uint32_t tile, uint32_t invocations, bool json) {
  // Like every command that lowers code (run, device simulate, device export): the package is
  // validated first, so a value the encoder cannot hold is bad input naming its field.
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  arch::validate_package(package, machine, file);
  const arch::TileProgram* program = nullptr;
  for (const auto& candidate : package.tiles) {
    if (candidate.tile == tile) program = &candidate;
  }
  if (program == nullptr) {
    throw InputError(file + ": tile " + std::to_string(tile) + ": the package has no program for this tile");
  }
  arch::TileCode code;
  try {
    code = arch::lower_tile_code(*program, machine, arch::package_lowering(package, machine, invocations));
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
  const std::span<const uint32_t> words(code.words.data(), code.code_bytes / 4);
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  size_t next_site = 0, next_symbol = 0;
  if (!json) {
    std::cout << "# tile " << tile << ": supervisor code at " << arch::hex(code.base) << ", " << code.code_bytes
              << " bytes; program at " << arch::hex(code.program) << "; data and stack to " << arch::hex(code.end())
              << " (stack top)\n";
  }
  for (size_t i = 0; i < words.size();) {
    const uint32_t address = code.base + static_cast<uint32_t>(4 * i);
    const arch::DecodedInstruction d = arch::decode(words, i);
    std::vector<std::string> notes;
    for (; next_symbol < code.symbols.size() && code.symbols[next_symbol].address == address; ++next_symbol) {
      const auto& s = code.symbols[next_symbol];
      const std::string what = s.kernel.empty() ? std::string("bulk patcher") : "kernel " + s.kernel;
      if (json) {
        notes.push_back("symbol " + s.name);
      } else {
        std::cout << s.name << ":" << (s.intrinsic ? "  (intrinsic: the model's " + what + ")" : "") << "\n";
      }
    }
    for (; next_site < code.sites.size() && code.sites[next_site].address == address; ++next_site) {
      notes.push_back(site_text(code.sites[next_site]));
    }
    if (json) {
      nlohmann::ordered_json item;
      item["address"] = address;
      item["words"] = nlohmann::ordered_json::array();
      for (uint32_t k = 0; k < d.word_count; ++k) item["words"].push_back(hex8(words[i + k]));
      item["op"] = arch::mnemonic(d.instruction.op);
      item["fields"] = nlohmann::ordered_json::object();
      for (const auto& field : arch::fields_of(d.instruction)) item["fields"][field.name] = field.value;
      item["notes"] = notes;
      array.push_back(std::move(item));
    } else {
      char prefix[48];
      std::snprintf(prefix, sizeof prefix, "  %s  %s  ", arch::hex(address).c_str(), hex8(words[i]).c_str());
      std::string line = prefix + arch::describe(d.instruction);
      for (size_t n = 0; n < notes.size(); ++n) line += (n == 0 ? "    ; " : "; ") + notes[n];
      std::cout << line << "\n";
    }
    i += d.word_count;
  }
  if (json) std::cout << json_text(array) << "\n";
  return kExitOk;
}

}  // namespace lockstep::cli
