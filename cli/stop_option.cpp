#include "cli/stop_option.hpp"

#include <cstdio>

#include "arch/instruction.hpp"
#include "cli/watch_option.hpp"
#include "formats/npy.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::cli {
namespace stop_option_local {

// "phase:3,iteration:5" as {phase: 3, iteration: 5}, each value a number.
std::vector<std::pair<std::string, uint64_t>> fields(const std::string& spec) {
  std::vector<std::pair<std::string, uint64_t>> out;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = spec.find(',', start);
    const std::string part = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t colon = part.find(':');
    if (colon == std::string::npos) return {};
    size_t used = 0;
    uint64_t value = 0;
    try {
      value = std::stoull(part.substr(colon + 1), &used, 0);
    } catch (const std::exception&) {
      return {};
    }
    if (used != part.size() - colon - 1 || part[colon + 1] == '-') return {};
    out.emplace_back(part.substr(0, colon), value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

sim::StopAt parse_stop(const std::string& spec) {
  sim::StopAt s;
  s.text = spec;
  const auto f = fields(spec);
  const auto name = [&](size_t i) { return i < f.size() ? f[i].first : std::string(); };
  if (spec == "hazard") {
    s.kind = sim::StopAt::Kind::Hazard;
  } else if (f.size() == 1 && name(0) == "cycle") {
    s.kind = sim::StopAt::Kind::Cycle;
    s.cycle = f[0].second;
  } else if ((f.size() == 1 || (f.size() == 2 && name(1) == "iteration")) && name(0) == "phase" &&
             f[0].second <= UINT32_MAX && f.back().second <= UINT32_MAX) {
    s.kind = sim::StopAt::Kind::Phase;
    s.phase = static_cast<uint32_t>(f[0].second);
    s.iteration = f.size() == 2 ? static_cast<uint32_t>(f[1].second) : 0;
  } else if (f.size() == 2 && name(0) == "tile" && name(1) == "step" && f[0].second <= UINT32_MAX &&
             f[1].second <= UINT32_MAX) {
    s.kind = sim::StopAt::Kind::Step;
    s.tile = static_cast<uint32_t>(f[0].second);
    s.step = static_cast<uint32_t>(f[1].second);
  } else {
    throw InputError("--stop-at " + spec + ": expected cycle:N, phase:P[,iteration:I], tile:T,step:S or hazard");
  }
  return s;
}

std::string word_hex(uint32_t v) {  // the row word as disassembly listings print it
  char text[16];
  std::snprintf(text, sizeof text, "%08x", v);
  return text;
}

std::string rows_text(const std::vector<sim::RowState>& rows) {
  std::string out;
  for (const sim::RowState& r : rows) {
    out += "tile " + std::to_string(r.tile) + ": phase " + std::to_string(r.phase) + " iteration " +
           std::to_string(r.iteration) + ", INCOMING_MUX " + arch::hex(r.mux) + ", paired mux " +
           arch::hex(r.paired_mux) + ", INCOMING_FORMAT " + std::to_string(r.incoming_format) + ", INCOMING_BASE " +
           arch::hex(r.incoming_base) + (r.row_address ? ", row at " + arch::hex(*r.row_address) : ", no row") + "\n";
    for (size_t i = 0; i < r.row.size();) {
      std::string text;
      size_t words = 1;
      try {
        const arch::DecodedInstruction d = arch::decode(r.row, i);
        text = arch::describe(d.instruction);
        words = d.word_count;
      } catch (const std::exception&) {
        text = "(not an instruction)";
      }
      out += "  " + arch::hex(*r.row_address + 4 * static_cast<uint32_t>(i)) + "  " + word_hex(r.row[i]) + "  " + text +
             "\n";
      i += words;
    }
  }
  return out;
}

void write_dump(const std::string& file, const std::string& dtype, const std::vector<uint8_t>& bytes) {
  if (file.size() < 4 || file.compare(file.size() - 4, 4, ".npy") != 0) {
    arch::write_file_atomically(file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return;
  }
  const arch::NpyType type = dtype == "f16"   ? arch::NpyType::kFloat16
                             : dtype == "f32" ? arch::NpyType::kFloat32
                                              : arch::NpyType::kUint8;
  const uint64_t size = type == arch::NpyType::kFloat16 ? 2 : type == arch::NpyType::kFloat32 ? 4 : 1;
  arch::write_npy(file, arch::make_npy(type, {bytes.size() / size}, bytes));
}

}  // namespace stop_option_local
using namespace stop_option_local;

void add_stop_options(CLI::App& command, StopArgs& args) {
  command.add_option("--stop-at", args.stop_at,
                     "stop the run at cycle:N (the first phase release at or after cycle N),\n"
                     "phase:P[,iteration:I] (right after that phase execution), tile:T,step:S (as logical\n"
                     "tile T enters its top-level step S) or hazard (the first one); there --dump and\n"
                     "--dump-rows are written, the outputs are not, and the run ends with exit 0");
  command.add_option("--dump", args.dumps,
                     "TILE:ADDRESS:BYTES[:DTYPE]=FILE: at the stop, write those bytes of a logical tile to\n"
                     "FILE, raw, or a .npy array of DTYPE (f16, f32, u8; default u8) when FILE ends .npy\n"
                     "(repeatable; needs --stop-at)");
  command.add_option("--dump-rows", args.dump_rows,
                     "at the stop, write every tile's exchange state (phase, iteration, INCOMING_MUX, paired\n"
                     "mux, INCOMING_FORMAT, INCOMING_BASE) and its row, disassembled, to FILE (needs --stop-at)");
}

void apply_stop(StopArgs& args, sim::RunOptions& options, const std::vector<std::string>& inputs) {
  if (args.stop_at.empty()) {
    if (!args.dumps.empty() || !args.dump_rows.empty()) throw InputError("--dump and --dump-rows need --stop-at");
    return;
  }
  options.stop_at = parse_stop(args.stop_at);
  options.keep_going = options.keep_going && options.stop_at->kind != sim::StopAt::Kind::Hazard;
  for (const std::string& spec : args.dumps) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq + 1 == spec.size())
      throw InputError("--dump " + spec + ": expected TILE:ADDRESS:BYTES[:DTYPE]=FILE");
    std::string range = spec.substr(0, eq), dtype = "u8";
    if (const size_t colon = range.rfind(':'); std::count(range.begin(), range.end(), ':') == 3) {
      dtype = range.substr(colon + 1);
      range = range.substr(0, colon);
      if (dtype != "f16" && dtype != "f32" && dtype != "u8")
        throw InputError("--dump " + spec + ": dtype " + dtype + ": expected f16, f32 or u8");
    }
    if (std::count(range.begin(), range.end(), ':') != 2)
      throw InputError("--dump " + spec + ": expected TILE:ADDRESS:BYTES[:DTYPE]=FILE");
    const model::WatchRange r = parse_watches({range}).front();
    if ((dtype == "f16" && r.bytes % 2) || (dtype == "f32" && r.bytes % 4))
      throw InputError("--dump " + spec + ": " + std::to_string(r.bytes) + " bytes are not whole " + dtype +
                       " elements");
    args.files.push_back(spec.substr(eq + 1));
    args.dtypes.push_back(dtype);
    options.dumps.push_back(r);
  }
  for (const std::string& file : args.files) {
    arch::check_output_file(file, "--dump");
    arch::refuse_overwriting_input(file, inputs);
  }
  if (!args.dump_rows.empty()) {
    arch::check_output_file(args.dump_rows, "--dump-rows");
    arch::refuse_overwriting_input(args.dump_rows, inputs);
    options.dump_rows = true;
  }
}

bool finish_stop(const StopArgs& args, const sim::RunResult& result, std::ostream& out) {
  if (args.stop_at.empty()) return false;
  if (result.stopped_at.empty()) {
    out << "--stop-at " << args.stop_at << ": the run never got there (it ended at cycle " << result.total_cycles
        << ")\n";
    return false;
  }
  for (size_t i = 0; i < args.files.size(); ++i) write_dump(args.files[i], args.dtypes[i], result.dumps.at(i));
  if (!args.dump_rows.empty()) arch::write_file_atomically(args.dump_rows, rows_text(result.rows));
  out << "stopped at " << result.stopped_at << "; " << args.files.size()
      << (args.files.size() == 1 ? " dump" : " dumps") << (args.dump_rows.empty() ? "" : " and the rows")
      << " written\n";
  return true;
}

}  // namespace lockstep::cli
