// Simulator throughput on long messages: one synthetic phase on the full C600, run as a
// Repeat of kIterations. Every one of the 1,472 tiles sends 16,384 words to a permutation
// partner (i -> 7i + 5 mod 1472) and receives 16,384 words from another, with rows built by
// arch::encode. Prints simulated cycles, wall time, delivered words per second beside a
// memcpy of the same bytes (the physical limit, measured in the same run) and peak RSS, and
// checks that every receiver holds its sender's tokens after the last iteration. Prints
// the words per second beside the throughput issue's goal (1 G/s and 35% of memcpy).
// With LOCKSTEP_BINARY (scripts/bench.sh sets it), also the command-line figures of the
// throughput issue (25), wall time and peak memory as a user sees them, from the source
// tree: `lockstep run` of the exchange-only package of the full-size capture (B1024;
// without the payload proof, goal 5 s, beside a memcpy of the bytes its exchanges copy; with
// it, goal 10 s) and `lockstep replay` of one reduce phase, every word of all 27 iterations
// (goal 0.6 s, and 35% of memcpy, judged on the median of five runs of the run itself, each
// beside its own memcpy, and after each the first touch of a fresh 2 MiB page, the state of
// the guest's memory that run met; beside it the replay's page faults and one core's first
// touch of a fresh page, measured in the same run; the run itself split into its first
// iteration and each further one; and the least a program that lands and compares every word
// of that replay takes: tokens, copies and compares alone, on fresh pages, on fresh pages mapped
// ahead and on pages already touched, with whether 35% is within its reach; the simulator's
// replay lands no word whose tokens wait since round thirty-two), and the same replay with and
// without `--watch`.
#include <sys/mman.h>
#include <sys/resource.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "bench/bench_support.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "formats/token.hpp"
#include "io/parallel.hpp"
#include "replay/sampling.hpp"
#include "sim/backend.hpp"

namespace {

using namespace lockstep;
using arch::Instruction;
using arch::Opcode;

constexpr uint32_t kWords = 16384;
constexpr uint32_t kIterations = 16;
// Each 64 KiB block in its own 32 KiB memory elements, all below the supervisor code area at
// the top of SRAM (the destination used to end at 0x80000 and clipped it: hazard 3).
constexpr uint32_t kRow = 0x4c000, kSource = 0x58000, kDestination = 0x68000;
constexpr uint64_t kSeed = 11;

struct Control {
  int64_t event;
  bool xpic;
  uint32_t value;
  bool operator<(const Control& o) const { return event < o.event; }
};

// Emits a row with one stream of kWords items issued at `issue` and the controls at their
// events: before and after the stream through delay*pic, inside it through sendpic.
std::vector<uint32_t> build_row(int64_t issue, std::vector<Control> controls, int64_t end) {
  std::sort(controls.begin(), controls.end());
  std::vector<uint32_t> row;
  int64_t t = 0;
  uint32_t sent = 0;
  bool started = false;
  auto wait_until = [&](int64_t e) {
    while (e - t > 0) {
      const auto n = static_cast<uint32_t>(std::min<int64_t>(e - t, 1 << 19));
      arch::encode_into({.op = Opcode::Delay, .events = n}, row);
      t += n;
    }
  };
  auto delay_control = [&](const Control& c) {
    // delay*pic carries at most 128 (PIC) / 4096 (XPIC) events: pad with a delay first.
    const int64_t limit = c.xpic ? 4096 : 128;
    if (c.event - t > limit) wait_until(c.event - limit);
    const auto n = static_cast<uint32_t>(c.event - t);
    arch::encode_into(
        {.op = c.xpic ? Opcode::DelayXpic : Opcode::DelayPic, .events = n, .selector = 0, .value = c.value}, row);
    t = c.event;
  };
  auto stream = [&](uint32_t items) {  // items leave at t + 1 ...
    while (items > 0) {
      uint32_t n;
      if (!started) {
        n = std::min<uint32_t>(items, 64);
        arch::encode_into({.op = Opcode::Send, .words = n, .address = kSource / 4, .sctl = 0}, row);
        started = true;
      } else {
        n = std::min<uint32_t>(items, 4096);
        arch::encode_into({.op = Opcode::SendOff, .words = n, .sctl = 0}, row);
      }
      t += n;
      sent += n;
      items -= n;
    }
  };
  for (const auto& c : controls) {
    if (c.event < issue) {
      delay_control(c);
    } else if (c.event <= issue + kWords) {
      if (!started) wait_until(issue);
      stream(static_cast<uint32_t>(c.event - 1 - t));
      arch::encode_into({.op = Opcode::SendPic, .words = 1, .selector = c.xpic ? 0u : 2u, .value = c.value}, row);
      t += 1;
      sent += 1;
    } else {
      if (!started) wait_until(issue);
      stream(kWords - sent);
      delay_control(c);
    }
  }
  if (!started) wait_until(issue);
  stream(kWords - sent);
  wait_until(end);
  arch::encode_into({.op = Opcode::Return}, row);
  return row;
}

// One core copying every delivered byte once, tile buffer to tile buffer, as often as the
// run delivers them: the memory-bandwidth limit the simulator is held against.
double memcpy_seconds(uint32_t tiles) {
  const size_t bytes = size_t(kWords) * 4;
  std::vector<std::vector<uint8_t>> from(tiles, std::vector<uint8_t>(bytes, 1)), to(tiles, std::vector<uint8_t>(bytes));
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t r = 0; r < kIterations; ++r) {
    for (uint32_t i = 0; i < tiles; ++i) std::memcpy(to[(7 * i + 5) % tiles].data(), from[i].data(), bytes);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  volatile uint8_t sink = to[5][bytes - 1];  // keeps the copies
  (void)sink;
  return seconds;
}

}  // namespace

// The part of the first line of a `--log-level debug` log that starts at `marker` ("" when no
// line holds it), and the number that follows a marker in such a part (0 when it is not there).
std::string log_from(const std::string& log, const std::string& marker) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (const size_t at = line.find(marker); at != std::string::npos) return line.substr(at);
  }
  return "";
}
double number_after(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + marker.size(), nullptr);
}

// What the replay's `--log-level debug` line says of the run itself: "... simulated and checked
// in X ms, N page faults meanwhile"; seconds -1 when the log has no such line.
struct ReplayRunFigures {
  double seconds = -1;
  uint64_t page_faults = 0;
};
ReplayRunFigures replay_run_figures(const std::string& log) {
  const std::string marker = "simulated and checked in ", line = log_from(log, marker);
  if (line.empty()) return {};
  return {number_after(line, marker) / 1e3, static_cast<uint64_t>(number_after(line, " ms, "))};
}

// The run itself of `runs` replays (`argv` with `--log-level debug`), each beside one core's
// memcpy measured right after it: this machine's speed moves by a fifth or more within minutes,
// and a single run beside a single memcpy took the ratio from a fast minute and a slow one
// (docs/performance.md, round thirty-four). Sorted by the ratio; empty when one failed.
struct PairedRun {
  double seconds = 0, memcpy_gbps = 0, share = 0;  // share: of that memcpy's words per second
  uint64_t page_faults = 0, minor_faults = 0;
  double huge_touch_ms = 0;  // a fresh 2 MiB page's first touch, measured after that memcpy
};
std::vector<PairedRun> paired_runs_itself(std::vector<std::string> argv, const std::string& log, double words,
                                          int runs) {
  argv.insert(argv.end(), {"--log-level", "debug"});
  std::vector<PairedRun> out;
  for (int i = 0; i < runs; ++i) {
    const bench::CommandFigure command = bench::measured_command(argv, log);
    const ReplayRunFigures figures = command.seconds < 0 ? ReplayRunFigures{} : replay_run_figures(log);
    if (figures.seconds <= 0) return {};
    PairedRun r{figures.seconds, bench::memcpy_gb_per_s(256u << 20), 0, figures.page_faults, command.minor_faults};
    r.share = words / r.seconds / (r.memcpy_gbps * 1e9 / 4);
    // Microseconds a 4 KiB page on huge pages, so 512 of them a 2 MiB page.
    r.huge_touch_ms = bench::first_touch_us_per_page(bench::FirstTouch::HugePages) * 512 / 1e3;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const PairedRun& a, const PairedRun& b) { return a.share < b.share; });
  return out;
}

// The median of `runs` replays' run itself (`argv` with `--log-level debug`), in seconds; -1
// when one failed or its log has no timing.
double median_run_itself(std::vector<std::string> argv, const std::string& log, int runs) {
  argv.insert(argv.end(), {"--log-level", "debug"});
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    if (bench::measured_command(argv, log).seconds < 0) return -1;
    seconds.push_back(replay_run_figures(log).seconds);
    if (seconds.back() < 0) return -1;
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// What a run's `--log-level debug` summary says its exchanges moved: "run: E phase executions
// copied B bytes between SRAMs in C copies; L bytes of repeats were in place already ..."; bytes
// 0 when the log has no such line.
struct CopiedFigures {
  uint64_t bytes = 0, copies = 0, in_place = 0;
};
CopiedFigures copied_figures(const std::string& log) {
  const std::string marker = " phase executions copied ", line = log_from(log, marker);
  return {static_cast<uint64_t>(number_after(line, marker)),
          static_cast<uint64_t>(number_after(line, " between SRAMs in ")),
          static_cast<uint64_t>(number_after(line, " copies; "))};
}

// The least a replay of `phase` that lands every word can do, timed: no simulation, no plan, only the words' own
// work. Each iteration makes every transfer's tokens once, lands them at each of its
// destinations (the copy, its source tokens made where they land, as the simulator's copies
// make a deferred source's: model/token_pages.hpp) and compares that destination with them (the
// check) while its words are still in cache, transfers in parallel on both cores. (Landing
// every destination first and comparing them all after took a third longer: round
// twenty-eight.) Sources are never written or read: the replay's refill defers them. Done three
// times: on a fresh mapping of every tile's SRAM, as a new process finds it; on another fresh
// mapping whose destination pages are first mapped ahead (timed too), as the simulator's
// fabric maps them; then again on the first mapping, whose pages are touched already. The
// physical limit beside the replay's run itself.
struct IdealReplay {
  double fresh_seconds = -1, mapped_ahead_seconds = -1, warm_seconds = -1;
  uint64_t wrong_destinations = 0;
};
IdealReplay ideal_replay(const arch::CapturePhase& phase, const arch::MachineDescription& machine) {
  constexpr uint64_t kSeed = 1;
  const uint32_t sram_bytes = machine.sram_bytes();
  const size_t bytes = size_t{machine.tiles} * sram_bytes;
  const auto map_sram = [&] {
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return mapped == MAP_FAILED ? nullptr : static_cast<uint8_t*>(mapped);
  };
  const auto& transfers = phase.transfers;
  tbb::enumerable_thread_specific<uint64_t> wrong(0);
  tbb::enumerable_thread_specific<std::vector<uint32_t>> buffers;
  const auto replay_once = [&](uint8_t* sram, bool map_ahead) {
    const auto word_at = [&](uint32_t tile, uint32_t address) {
      return reinterpret_cast<uint32_t*>(sram + size_t{tile} * sram_bytes + (address - machine.sram_base));
    };
    const auto start = std::chrono::steady_clock::now();
    if (map_ahead) {
      std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
      for (const auto& transfer : transfers) {
        for (const auto& d : transfer.destinations) {
          const auto begin = reinterpret_cast<uintptr_t>(word_at(d.tile, d.address));
          ranges.emplace_back(begin, begin + size_t{transfer.words} * 4);
        }
      }
      arch::populate_for_write(std::move(ranges));
    }
    for (uint32_t i = 0; i < phase.iterations; ++i) {
      tbb::parallel_for(size_t{0}, transfers.size(), [&](size_t t) {
        const auto& transfer = transfers[t];
        auto& expected = buffers.local();
        expected.resize(transfer.words);
        arch::payload_tokens(kSeed, transfer.source_tile, transfer.source_addresses[i], i, expected);
        for (const auto& d : transfer.destinations) {
          uint32_t* to = word_at(d.tile, d.address);
          arch::payload_tokens(kSeed, transfer.source_tile, transfer.source_addresses[i], i, {to, transfer.words});
          wrong.local() += std::memcmp(to, expected.data(), size_t{transfer.words} * 4) != 0;
        }
      });
    }
    return bench::seconds_since(start);
  };
  IdealReplay ideal;
  uint8_t* first = map_sram();
  uint8_t* second = map_sram();
  if (first != nullptr && second != nullptr) {
    ideal.fresh_seconds = replay_once(first, false);
    ideal.mapped_ahead_seconds = replay_once(second, true);
    ideal.warm_seconds = replay_once(first, false);
    ideal.wrong_destinations = wrong.combine(std::plus<>());
  }
  for (uint8_t* mapped : {first, second}) {
    if (mapped != nullptr) ::munmap(mapped, bytes);
  }
  return ideal;
}

// The full-size capture from the command line (issue 25's rows): lower; compile with and
// without the payload proof and run each exchange-only package; replay the attention
// output's reduce phase (phase 10), every word of all 27 iterations, beside a memcpy of the
// words it checks; and that replay with and without `--watch`.
void command_line_figures(const std::string& binary) {
  namespace fs = std::filesystem;
  using bench::measured_command;
  const fs::path directory = fs::temp_directory_path() / ("bench_simulator_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const std::string capture = (directory / "siglip.capnp").string();
  const std::string proof = (directory / "exchange.lkspkg").string();
  const std::string bare = (directory / "exchange-no-proof.lkspkg").string();
  const std::vector<std::string> compile = {binary, "compile", capture, "--exchange-stream-words", "1024", "-o"};
  std::vector<std::string> with_proof = compile, without_proof = compile;
  with_proof.push_back(proof);
  without_proof.insert(without_proof.end(), {bare, "--no-proof"});
  if (measured_command({binary, "lower", "configs/workloads/siglip-so400m.yaml", "-o", capture}).seconds < 0 ||
      measured_command(with_proof).seconds < 0 || measured_command(without_proof).seconds < 0) {
    std::printf("command line: lowering or compiling configs/workloads/siglip-so400m.yaml failed\n");
  } else {
    // Medians of several runs: this machine's speed moves by a fifth within minutes.
    const bench::MedianFigure run_bare = bench::median_of({binary, "run", bare}, 3);
    bench::print_against_goal("lockstep run, exchange-only package of the full-size capture (B1024, --no-proof)",
                              run_bare, 5.0);
    std::printf("  peak RSS %.2f GB\n", run_bare.peak_rss_gb);
    // Its physical limit: the words its exchanges copy between SRAMs, at one core's memcpy.
    const std::string copy_log = (directory / "run.log").string();
    const CopiedFigures copied = measured_command({binary, "run", bare, "--log-level", "debug"}, copy_log).seconds < 0
                                     ? CopiedFigures{}
                                     : copied_figures(copy_log);
    if (copied.bytes > 0 && run_bare.median.seconds > 0) {
      const double gbps = bench::memcpy_gb_per_s(256u << 20);
      std::printf(
          "  its exchanges copied %.2f GB between SRAMs in %.1f M copies (%.2f GB more of repeats were in "
          "place already); one core's memcpy (%.2f GB/s, measured now) moves that in %.2f s, %.1f%% of the "
          "run's median\n",
          copied.bytes / 1e9, copied.copies / 1e6, copied.in_place / 1e9, gbps, copied.bytes / 1e9 / gbps,
          100.0 * copied.bytes / 1e9 / gbps / run_bare.median.seconds);
    }
    const bench::MedianFigure run = bench::median_of({binary, "run", proof}, 3);
    bench::print_against_goal("lockstep run, exchange-only package of the full-size capture (B1024, proof)", run, 10.0);
    std::printf("  peak RSS %.2f GB\n", run.peak_rss_gb);
    const std::vector<std::string> plain = {binary, "replay", capture, "--phase", "10", "--config", "B1024", "--all"};
    const bench::MedianFigure replay_runs = bench::median_of(plain, 5);
    bench::print_against_goal("lockstep replay --phase 10 --config B1024 --all (27 iterations, every word)",
                              replay_runs, 0.6);
    const bench::CommandFigure replay = replay_runs.median;
    const arch::Capture lowered = arch::read_capture(capture, 10);
    const auto& phase = lowered.phases.front();
    const double words = double(replay::count_destination_words(phase)) * phase.iterations;
    const double gbps = bench::memcpy_gb_per_s(256u << 20);
    if (replay.seconds > 0) {
      std::printf(
          "  %.0f M words checked: %.0f M words/s over the whole command, %.1f%% of one core's memcpy "
          "(%.2f G words/s, measured now)\n",
          words / 1e6, words / replay.seconds / 1e6, 100.0 * words / replay.seconds / (gbps * 1e9 / 4), gbps / 4);
    }
    // The run itself: simulating and checking, without reading, validating and compiling the
    // capture, as the replay's debug log times it; five runs, each beside its own memcpy, and
    // the goal judged on the median of their shares.
    const std::string log = (directory / "replay.log").string();
    const std::vector<PairedRun> paired = paired_runs_itself(plain, log, words, 5);
    const PairedRun middle = paired.empty() ? PairedRun{} : paired[paired.size() / 2];
    const double run_seconds = paired.empty() ? -1 : middle.seconds;
    if (run_seconds > 0) {
      std::printf(
          "  the run itself (simulating and checking; the median of 5 runs, each beside its own memcpy): "
          "%.3f s, %.0f M words/s, %.1f%% of that memcpy (%.2f G words/s); the 5 runs %.1f-%.1f%% (goal 35%%: "
          "%s)\n",
          run_seconds, words / run_seconds / 1e6, 100.0 * middle.share, middle.memcpy_gbps / 4,
          100.0 * paired.front().share, 100.0 * paired.back().share, middle.share >= 0.35 ? "met" : "missed");
      // What the slow runs meet: the host taking the guest's free memory back makes each fresh
      // 2 MiB page the run touches cost milliseconds (docs/performance.md, round thirty-five).
      std::printf(
          "  fresh 2 MiB pages beside those runs (each measured after its run's memcpy), one core's first "
          "touch:");
      for (const PairedRun& r : paired) std::printf(" %.2f ms (run at %.1f%%)", r.huge_touch_ms, 100.0 * r.share);
      std::printf("\n");
      const double run_gbps = middle.memcpy_gbps;  // "that memcpy" below
      // The other limit a fresh process meets: every page it uses is touched a first time.
      const double touch_us = bench::first_touch_us_per_page();
      // Pages the loader mapped ahead count as faults too, at about half that cost: at most.
      std::printf(
          "  first touches: the whole replay took %llu page faults; one core's first touch of a fresh "
          "page %.2f us (measured now), so at most %.0f ms of CPU for those pages at that rate\n",
          static_cast<unsigned long long>(middle.minor_faults), touch_us, double(middle.minor_faults) * touch_us / 1e3);
      // The floor of the run itself: its fresh pages at the cheapest first touch (mapped ahead,
      // then written), at the wall rate of both cores touching pages together (1.35-1.9 times
      // one core's here, not twice: round thirty), against what the 35% goal leaves for everything.
      const double populated_us = bench::first_touch_us_per_page(bench::FirstTouch::MappedAheadThenWritten);
      const double populated_both_us = bench::first_touch_us_per_page(bench::FirstTouch::MappedAheadThenWritten, 2);
      std::printf(
          "  the run itself touched %llu fresh pages: at the cheapest first touch (mapped ahead, then "
          "written: %.2f us a page on one core, %.2f us of wall time a page on both, measured now), at "
          "least %.0f ms; 35%% of memcpy allows %.0f ms for the whole run\n",
          static_cast<unsigned long long>(middle.page_faults), populated_us, populated_both_us,
          double(middle.page_faults) * populated_both_us / 1e3, 1e3 * words / (0.35 * run_gbps * 1e9 / 4));
      // The run itself split: a replay of the first iteration alone carries what every replay
      // pays once (the chip built, 1,440 tiles loaded, the phase planned) and one iteration's
      // words; each further iteration costs the difference over the rest.
      std::vector<std::string> first = plain;
      first.insert(first.end(), {"--iterations", "first"});
      const double all_seconds = median_run_itself(plain, log, 3), first_seconds = median_run_itself(first, log, 3);
      if (all_seconds > 0 && first_seconds > 0 && phase.iterations > 1 && all_seconds > first_seconds) {
        const double each = (all_seconds - first_seconds) / (phase.iterations - 1), per = words / phase.iterations;
        std::printf(
            "  the run itself split (medians of 3): the first iteration alone %.0f ms (the chip built, the tiles "
            "loaded, the phase planned, one iteration's words); each further iteration %.2f ms, %.0f M words/s, "
            "%.1f%% of that memcpy\n",
            1e3 * first_seconds, 1e3 * each, per / each / 1e6, 100.0 * per / each / (run_gbps * 1e9 / 4));
      } else {
        std::printf("  the run itself split: not measured (all iterations %.0f ms, the first alone %.0f ms)\n",
                    1e3 * all_seconds, 1e3 * first_seconds);
      }
      const IdealReplay ideal = ideal_replay(phase, arch::load_machine(lowered.machine_name));
      if (ideal.fresh_seconds > 0) {
        const auto share = [&](double seconds) { return 100.0 * words / seconds / (run_gbps * 1e9 / 4); };
        // Since round thirty-two the simulator's replay lands no word whose tokens wait (its copies
        // lay runs of them over the destinations' pages), so this bounds a replay that lands every
        // word, not Lockstep's.
        std::printf(
            "  a replay that lands every word, on no simulator (each iteration: every destination's tokens landed "
            "and compared while in cache; both cores): %.3f s on fresh pages, %.1f%% of that memcpy; "
            "%.3f s on fresh pages mapped ahead, %.1f%%; %.3f s again on pages already touched, %.1f%%; "
            "%llu wrong destinations\n",
            ideal.fresh_seconds, share(ideal.fresh_seconds), ideal.mapped_ahead_seconds,
            share(ideal.mapped_ahead_seconds), ideal.warm_seconds, share(ideal.warm_seconds),
            static_cast<unsigned long long>(ideal.wrong_destinations));
        // A replay is a new process: its destinations start on fresh pages whatever it does.
        const double least_fresh = share(std::min(ideal.fresh_seconds, ideal.mapped_ahead_seconds));
        std::printf("  35%% of memcpy against that replay on fresh pages (%.1f%%): %s\n", least_fresh,
                    least_fresh >= 35.0 ? "within its reach" : "beyond a replay that lands every word here");
      }
    } else {
      std::printf("  the run itself: no timing in the replay's debug log\n");
    }
    // --watch: the writers test one pointer when nothing is watched; with a word watched they
    // also compare it after every write on its tile. Best of 3 each, the same replay.
    std::vector<std::string> watched = plain;
    for (const char* a : {"--watch", "0:0x4c000:64"}) watched.push_back(a);
    const double without = bench::best_of(plain, 3).seconds, with = bench::best_of(watched, 3).seconds;
    if (without > 0 && with > 0) {
      std::printf("--watch cost on that replay: %.3f s without, %.3f s with 16 watched words on tile 0 (%+.1f%%)\n",
                  without, with, 100.0 * (with - without) / without);
    }
  }
  std::error_code ignored;
  fs::remove_all(directory, ignored);
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures appear as they are measured
  const auto machine = arch::load_machine("ipu21-c600");
  const arch::Topology topology(machine);
  const uint32_t n = machine.tiles;
  std::vector<uint32_t> to(n), from(n);
  for (uint32_t i = 0; i < n; ++i) {
    to[i] = (7 * i + 5) % n;
    from[to[i]] = i;
  }
  // Receive window start per receiver; nudged so no control lands on a tile's own send
  // issue or first-item event (hazard 9).
  std::vector<int64_t> m0(n, 200);
  auto issue_of = [&](uint32_t i) {
    return m0[to[i]] - 1 - topology.time_to_mux(topology.physical(i), topology.physical(to[i]));
  };
  auto controls_of = [&](uint32_t i) {
    const uint32_t s = topology.physical(from[i]);
    const int64_t w = topology.write_delay(topology.physical(i));
    return std::vector<Control>{{m0[i], true, s}, {m0[i] + kWords, true, machine.neutral_mux}, {m0[i] + w, false, 0}};
  };
  for (int round = 0; round < 1000; ++round) {
    bool clean = true;
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t issue = issue_of(i);
      for (const auto& c : controls_of(i)) {
        if (c.event == issue || c.event == issue + 1) {
          m0[to[i]] += 2;
          clean = false;
          break;
        }
      }
    }
    if (clean) break;
  }
  arch::Package package;
  package.machine_name = machine.name;
  package.machine_digest = machine.digest;
  package.phases.push_back({1, "bench.permutation", 1, "synthetic"});
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t d = topology.physical(to[i]);
    const int64_t issue = issue_of(i);
    const int64_t w = topology.write_delay(topology.physical(i));
    const int64_t end = std::max<int64_t>(issue + kWords, m0[i] + kWords - 1 + w + 6);
    auto row = build_row(issue, controls_of(i), end);
    // The stream's sctl is the direction to the partner; patch it into every send word.
    const uint32_t dir = static_cast<uint32_t>(topology.direction(topology.physical(i), d));
    for (uint32_t& word : row) {
      if ((word & 0xf8000000u) == 0x78000000u || (word & 0xf8100000u) == 0x70000000u) word |= dir;
    }
    arch::TileProgram t;
    t.tile = i;
    t.table = {kRow, 0x1000};
    arch::Segment rs;
    rs.address = kRow;
    rs.size = static_cast<uint32_t>(row.size() * 4);
    rs.fill = arch::FillKind::Bytes;
    for (uint32_t word : row) {
      for (int b = 0; b < 4; ++b) rs.bytes.push_back(static_cast<uint8_t>(word >> (8 * b)));
    }
    arch::Segment src;
    src.address = kSource;
    src.size = kWords * 4;
    src.fill = arch::FillKind::Tokens;
    src.token_seed = kSeed;
    t.segments = {rs, src};
    arch::ExchangeStep step;
    step.phase = 1;
    step.row_address = kRow;
    step.incoming_base = kDestination;
    t.steps.push_back({arch::RepeatStep{kIterations, {arch::Step{step}}, {}}});
    package.tiles.push_back(std::move(t));
  }
  auto backend = sim::make_systemc_backend(machine);
  sim::RunOptions options;
  uint64_t wrong = 0;
  // Every iteration copies its words, as when a kernel makes each iteration's data: the host
  // writes each source's first word again (the same token) between iterations. A Repeat whose
  // pages nothing writes is not copied again (docs/timing.md), which would leave 15 of the 16
  // iterations' words uncopied and this figure meaningless.
  options.after_exchange = [&](const sim::PhaseExecution& execution, sim::MemoryView& memory) {
    if (execution.iteration + 1 < kIterations) {
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t token = arch::payload_token(kSeed, i, kSource);
        memory.write(i, kSource, 4, reinterpret_cast<const uint8_t*>(&token));
      }
      return;
    }
    std::vector<uint8_t> got(kWords * 4);
    for (uint32_t i = 0; i < n; ++i) {
      memory.read(i, kDestination, kWords * 4, got.data());
      for (uint32_t k = 0; k < kWords; ++k) {
        const uint32_t v = uint32_t(got[4 * k]) | uint32_t(got[4 * k + 1]) << 8 | uint32_t(got[4 * k + 2]) << 16 |
                           uint32_t(got[4 * k + 3]) << 24;
        wrong += v != arch::payload_token(kSeed, from[i], kSource + 4 * k);
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  const sim::RunResult result = backend->run(package, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("tiles %u, words per tile %u, phase executions %zu\n", n, kWords, result.executions.size());
  std::printf("horizon %u events, total %llu simulated cycles\n",
              result.executions.empty() ? 0u : result.executions[0].horizon,
              static_cast<unsigned long long>(result.total_cycles));
  const double words = double(n) * kWords * kIterations;
  const double copy = memcpy_seconds(n);
  std::printf("wall %.3f s, %.0f simulated cycles/s\n", wall, result.total_cycles / wall);
  std::printf(
      "delivered %.2f G words/s (goal 1 G/s: %s); memcpy of the same bytes %.2f G words/s (%.3f s); "
      "ratio %.0f%% (goal 35%%: %s)\n",
      words / wall / 1e9, words / wall >= 1e9 ? "met" : "missed", words / copy / 1e9, copy, 100.0 * copy / wall,
      copy / wall >= 0.35 ? "met" : "missed");
  std::printf("peak RSS %.1f MiB\n", usage.ru_maxrss / 1024.0);
  std::printf("hazards %zu, wrong words %llu\n", result.hazards.size(), static_cast<unsigned long long>(wrong));
  for (size_t i = 0; i < std::min<size_t>(3, result.hazards.size()); ++i) {
    std::printf("  %s\n", sim::describe(result.hazards[i]).c_str());
  }
  if (const char* binary = std::getenv("LOCKSTEP_BINARY")) command_line_figures(binary);
  return result.hazards.empty() && wrong == 0 ? 0 : 1;
}
