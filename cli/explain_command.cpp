// `lockstep explain PACKAGE --output NAME --index I`: who wrote one output element, and where its
// data came from. Walks back from the element's word with the watch machinery (model/watch.hpp),
// one run a step: the word's last writer; an exchange leads to the sender's source word before
// the send, a kernel to the first operand whose data another tile or kernel brought (the word at
// the same offset; for a kernel working in place, the word itself before it), until the loader
// (an input, a weight or initial data) or the host.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "arch/machine.hpp"
#include "cli/binding_files.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
namespace explain_command_local {}
using namespace explain_command_local;
namespace explain_command_local {

struct ExplainArgs {
  std::string package;
  std::string output;
  uint64_t index = 0;
  std::vector<std::string> inputs;
  uint32_t max_steps = 256;
};

struct Word {
  uint32_t tile = 0;
  uint32_t address = 0;
};

uint32_t element_bytes(arch::ElementType type) {
  return type == arch::ElementType::Float16 ? 2 : type == arch::ElementType::Float32 ? 4 : 1;
}

// The word holding element `index` of output `name`.
Word element_word(const arch::Package& package, const ExplainArgs& args) {
  const auto it = std::find_if(package.bindings.begin(), package.bindings.end(), [&](const arch::Binding& b) {
    return b.name == args.output && b.kind == arch::BindingKind::Output;
  });
  if (it == package.bindings.end())
    throw InputError(args.package + ": --output " + args.output + ": no output binding by that name");
  uint64_t offset = args.index * element_bytes(it->element), total = 0;
  for (const arch::Slice& s : it->slices) total += s.bytes;
  if (offset >= total) {
    throw InputError("--index " + std::to_string(args.index) + ": output " + args.output + " has " +
                     std::to_string(total / element_bytes(it->element)) + " elements");
  }
  for (const arch::Slice& s : it->slices) {
    if (offset < s.bytes) return {s.tile, static_cast<uint32_t>((s.address + offset) & ~3ull)};
    offset -= s.bytes;
  }
  return {};
}

class Tracer {
 public:
  Tracer(const arch::Package& package, sim::RunOptions base) : package_(package), base_(std::move(base)) {
    backend_ = sim::make_systemc_backend(arch::load_machine(package.machine_name));
  }
  // The word's last write before `before` (a write at the same cycle counts when `inclusive`).
  std::optional<model::WatchWrite> last_write(Word w, uint64_t before, bool inclusive) {
    sim::RunOptions options = base_;
    options.watches = {{w.tile, w.address, 4}};
    const sim::RunResult r = backend_->run(package_, options);
    std::optional<model::WatchWrite> last;
    for (const model::WatchWrite& rec : r.watch_writes) {
      if (rec.cycle < before || (inclusive && rec.cycle == before)) last = rec;
    }
    return last;
  }
  std::string phase_name(uint32_t phase) const {
    for (const arch::Phase& p : package_.phases) {
      if (p.id == phase) return "phase " + std::to_string(phase) + (p.label.empty() ? "" : " (" + p.label + ")");
    }
    return "phase " + std::to_string(phase);
  }

 private:
  const arch::Package& package_;
  sim::RunOptions base_;
  std::unique_ptr<sim::Backend> backend_;
};

// A kernel's next word: the first operand other than the written one whose word at the same
// offset was last written by something other than the loader (the data path, not a weight);
// else the first loaded one (where the walk ends).
std::optional<Word> kernel_source(Tracer& tracer, const model::WatchWrite& w) {
  std::optional<Word> loaded;
  uint64_t offset = 0;
  for (const auto& [address, bytes] : w.operands) {
    if (w.address >= address && w.address < address + bytes) offset = w.address - address;
  }
  for (const auto& [address, bytes] : w.operands) {
    if (w.address >= address && w.address < address + bytes) continue;
    if (bytes < 4) continue;
    const Word candidate{w.tile, static_cast<uint32_t>((address + std::min<uint64_t>(offset, bytes - 4)) & ~3ull)};
    const auto before = tracer.last_write(candidate, w.cycle, false);
    if (before && before->writer.rfind("loader", 0) != 0) return candidate;
    if (before && !loaded) loaded = candidate;
  }
  // An in-place kernel (its output is an input): the word itself, before the kernel wrote it.
  const Word same{w.tile, w.address};
  const auto before = tracer.last_write(same, w.cycle, false);
  if (before && before->writer.rfind("loader", 0) != 0) return same;
  return loaded;
}

int explain(const ExplainArgs& args) {
  const arch::Package package = read_package_input(args.package);
  sim::RunOptions base;
  base.source_name = args.package;
  for (const auto& [b, file] : bindings_for(package, args.inputs, arch::BindingKind::Input, "--input")) {
    base.inputs[b->name] = read_input(*b, file);
  }
  Word word = element_word(package, args);
  std::cout << args.output << "[" << args.index << "] is tile " << word.tile << " word " << arch::hex(word.address)
            << "\n";
  Tracer tracer(package, base);
  uint64_t before = UINT64_MAX;
  for (uint32_t step = 1; step <= args.max_steps; ++step) {
    const auto w = tracer.last_write(word, before, before == UINT64_MAX);
    if (!w) {
      std::cout << step << ". tile " << word.tile << " word " << arch::hex(word.address)
                << ": never written (zero from the start)\n";
      return kExitOk;
    }
    std::cout << step << ". tile " << w->tile << " word " << arch::hex(w->address) << " = " << arch::hex(w->new_word)
              << ": " << w->writer << " at cycle " << w->cycle << ", " << tracer.phase_name(w->phase) << " iteration "
              << w->iteration << "\n";
    if (w->writer.rfind("exchange from tile ", 0) == 0) {
      uint32_t sender = 0, address = 0;
      std::sscanf(w->writer.c_str(), "exchange from tile %u address %x", &sender, &address);
      word = {sender, address};
    } else if (w->writer.rfind("kernel ", 0) == 0) {
      const auto next = kernel_source(tracer, *w);
      if (!next) {
        std::cout << "   its other operands were never written: zero from the start\n";
        return kExitOk;
      }
      word = *next;
    } else {
      return kExitOk;  // the loader, the host, a supervisor store: where the data began
    }
    before = w->cycle;
  }
  std::cout << "... stopped after " << args.max_steps << " steps (--max-steps)\n";
  return kExitOk;
}

const CommandRegistration registration{
    "explain", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("explain",
                             "Walk back from one output element to where its data began, printing the chain with\n"
                             "cycles: the kernel or exchange that last wrote its word, then for an exchange the\n"
                             "sender's source word before the send, for a kernel the first other operand another\n"
                             "kernel or tile wrote (the word at the same offset), and so on to the loader (an input,\n"
                             "a weight, initial data) or a host phase. Each step is one run of the package with a\n"
                             "--watch on that word. A kernel that stored the value a word already held is not seen.\n"
                             "Exit 0, 2 bad input (an unknown output, an index past its elements).");
      auto args = std::make_shared<ExplainArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("--output", args->output, "the output binding")->required();
      cmd->add_option("--index", args->index, "the element (in the binding's element type; bytes when untyped)")
          ->required();
      cmd->add_option("--input", args->inputs, "[NAME=]FILE: an input binding's values, as for `run` (repeatable)");
      cmd->add_option("--max-steps", args->max_steps, "stop the walk after this many steps")
          ->check(CLI::Range(1u, 4096u))
          ->capture_default_str();
      add_common_options(*cmd);
      return [args]() { return explain(*args); };
    }};

}  // namespace explain_command_local
}  // namespace lockstep::cli
