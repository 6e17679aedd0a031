// The cross-check's arithmetic against result folders whose differences are known by
// construction: per-phase spans, kernel sums, totals, error %, MAPE and Pearson's r, the
// payload comparison, thresholds, and the report's files.
#include "sim/device/crosscheck.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "io/errors.hpp"
#include "report/crosscheck_report.hpp"
#include "sim/device/device_result.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

struct Sample {
  uint32_t tile;
  uint32_t step;  // index into the profile's steps
  uint64_t start, end;
  uint32_t epoch = 0;
};

// Steps: 0 exchange phase 1, 1 exchange phase 2, 2 kernel gemm, 3 kernel add, 4 sync.
arch::Profile make_profile(const std::vector<Sample>& samples, uint64_t total) {
  arch::Profile p;
  p.clock_hz = 1'850'000'000;
  p.total_cycles = total;
  auto exchange = [](uint32_t phase, const char* label) {
    arch::ProfileStep s;
    s.kind = arch::ProfileStepKind::Exchange;
    s.kernel = "exchange";
    s.phase = arch::kExchangePhaseBit | phase;
    s.phase_label = label;
    return s;
  };
  auto compute = [](const char* kernel) {
    arch::ProfileStep s;
    s.kind = arch::ProfileStepKind::Compute;
    s.kernel = kernel;
    return s;
  };
  arch::ProfileStep sync;
  sync.kind = arch::ProfileStepKind::Synchronization;
  sync.kernel = "sync";
  p.steps = {exchange(1, "a.b"), exchange(2, "c.d"), compute("gemm"), compute("add"), sync};
  p.tiles.resize(2);
  for (uint32_t t = 0; t < 2; ++t) p.tiles[t].physical_tile = p.tiles[t].logical_tile = t;
  for (const auto& s : samples) p.tiles[s.tile].samples.push_back({s.start, s.end, s.step, s.epoch, 0});
  return p;
}

// Simulated: phase 1 spans 100 (latest start 10, latest end 110), phase 2 1000, gemm 2 x 90,
// add 50, total 1250.
arch::Profile simulated_profile() {
  return make_profile({{0, 0, 0, 100},
                       {1, 0, 10, 110},
                       {0, 2, 110, 200},
                       {1, 2, 110, 200},
                       {0, 1, 200, 1200},
                       {1, 1, 150, 1200},
                       {0, 3, 1200, 1250},
                       {1, 4, 1200, 1250}},
                      1250);
}

// Device: phase 1 = simulated x 1.1 (110), phase 2 and gemm equal, add 40, total 1300 (from
// the latest end: a stack profile has no total).
arch::Profile device_profile() {
  return make_profile({{0, 0, 0, 105},
                       {1, 0, 20, 130},
                       {0, 2, 130, 220},
                       {1, 2, 130, 220},
                       {0, 1, 220, 1220},
                       {1, 1, 220, 1220},
                       {0, 3, 1220, 1260},
                       {1, 4, 1220, 1300}},
                      0);
}

LoadedResult loaded(const std::string& dir, const arch::Profile& profile,
                    std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs) {
  LoadedResult r;
  r.dir = dir;
  r.result.runner = "test";
  r.result.status = "ok";
  r.result.clock_hz = 1'850'000'000;
  for (auto& [name, bytes] : outputs) r.result.outputs.push_back({name, output_file_name(name), bytes});
  r.profile = profile;
  return r;
}

const CycleRow& row(const Crosscheck& c, RowKind kind, const std::string& name) {
  for (const auto& r : c.rows) {
    if (r.kind == kind && r.name == name) return r;
  }
  throw std::runtime_error("no row " + name);
}

TEST(Crosscheck, ErrorsMapeAndCorrelationAsComputedByHand) {
  const Crosscheck c = crosscheck(loaded("sim", simulated_profile(), {{"y", {1, 2, 3}}}),
                                  loaded("dev", device_profile(), {{"y", {1, 2, 3}}}), {});
  ASSERT_EQ(c.rows.size(), 5u);  // phase 1, phase 2, add, gemm, total
  EXPECT_EQ(c.rows[0].name, "phase 1");
  EXPECT_EQ(c.rows[0].label, "a.b");
  EXPECT_EQ(*c.rows[0].simulated, 100u);
  EXPECT_EQ(*c.rows[0].device, 110u);
  EXPECT_NEAR(c.rows[0].error_percent(), -100.0 / 11.0, 1e-12);  // (100 - 110) / 110
  EXPECT_EQ(*row(c, RowKind::Phase, "phase 2").simulated, 1000u);
  EXPECT_EQ(row(c, RowKind::Phase, "phase 2").error_percent(), 0.0);
  EXPECT_EQ(*row(c, RowKind::Kernel, "gemm").simulated, 180u);
  EXPECT_EQ(*row(c, RowKind::Kernel, "gemm").device, 180u);
  EXPECT_NEAR(row(c, RowKind::Kernel, "add").error_percent(), 25.0, 1e-12);  // (50 - 40) / 40
  const CycleRow& total = row(c, RowKind::Total, "total");
  EXPECT_EQ(*total.simulated, 1250u);
  EXPECT_EQ(*total.device, 1300u);
  EXPECT_NEAR(total.error_percent(), -50.0 / 13.0, 1e-12);
  EXPECT_EQ(c.statistics.rows, 4u);
  EXPECT_NEAR(c.statistics.mape_percent, (100.0 / 11.0 + 25.0) / 4.0, 1e-12);  // 8.5227...
  EXPECT_NEAR(c.statistics.pearson_log, 0.9958892384567425, 1e-12);
  EXPECT_NEAR(c.statistics.pearson, 0.9998347326213621, 1e-12);
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(percent_text(c.rows[0].error_percent()), "-9.0909");
}

TEST(Crosscheck, ThresholdsNameTheRowAndTheBound) {
  const auto sim = loaded("sim", simulated_profile(), {});
  const auto dev = loaded("dev", device_profile(), {});
  EXPECT_TRUE(crosscheck(sim, dev, {4.0, 9.1, 25.0}).passed());
  const Crosscheck phase = crosscheck(sim, dev, {std::nullopt, 9.0, std::nullopt});
  ASSERT_EQ(phase.failures.size(), 1u);
  EXPECT_EQ(phase.failures[0],
            "phase 1 (a.b) epoch 0 invocation 0: simulated 100 cycles, device 110, error -9.0909% passes "
            "--max-phase-error 9.0000%");
  const Crosscheck total = crosscheck(sim, dev, {3.8, std::nullopt, 24.9});
  ASSERT_EQ(total.failures.size(), 2u);
  EXPECT_NE(total.failures[0].find("kernel add:"), std::string::npos) << total.failures[0];
  EXPECT_NE(total.failures[1].find("total: simulated 1250 cycles, device 1300, error -3.8462% passes "
                                   "--max-total-error 3.8000%"),
            std::string::npos)
      << total.failures[1];
}

TEST(Crosscheck, PayloadsComparedByteForByte) {
  const auto p = simulated_profile();
  const Crosscheck flipped = crosscheck(loaded("s", p, {{"a", {1, 2, 3, 4}}, {"b", {5}}}),
                                        loaded("d", p, {{"a", {1, 2, 9, 4}}, {"b", {5}}}), {});
  ASSERT_EQ(flipped.failures.size(), 1u);
  EXPECT_EQ(flipped.failures[0], "output 'a': first difference at byte 2");
  const Crosscheck sizes =
      crosscheck(loaded("s", p, {{"a", {1, 2, 3}}, {"c", {}}}), loaded("d", p, {{"a", {1, 2, 3, 4}}, {"e", {0}}}), {});
  ASSERT_EQ(sizes.failures.size(), 3u);
  EXPECT_EQ(sizes.failures[0],
            "output 'a': sizes differ (simulated 3 bytes, device 4 bytes); first difference at byte 3");
  EXPECT_EQ(sizes.failures[1], "output 'c': only in the simulated result");
  EXPECT_EQ(sizes.failures[2], "output 'e': only in the device result");
  // Identical profiles: every error 0, r = 1.
  const Crosscheck same = crosscheck(loaded("s", p, {}), loaded("d", p, {}), {0.0, 0.0, 0.0});
  EXPECT_TRUE(same.passed());
  EXPECT_EQ(same.statistics.mape_percent, 0.0);
  EXPECT_NEAR(same.statistics.pearson_log, 1.0, 1e-12);
}

TEST(Crosscheck, RowsOnOneSideFailAndZeroDeviceCyclesAreInfinite) {
  arch::Profile dev = device_profile();
  for (auto& t : dev.tiles) {
    std::erase_if(t.samples, [](const arch::CycleSample& s) { return s.step == 1; });  // no phase 2
  }
  const Crosscheck c = crosscheck(loaded("s", simulated_profile(), {}), loaded("d", dev, {}), {});
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_EQ(c.failures[0], "phase 2 (c.d) epoch 0 invocation 0: only in the simulated profile");
  CycleRow zero;
  zero.simulated = 5;
  zero.device = 0;
  EXPECT_TRUE(std::isinf(zero.error_percent()));
  zero.simulated = 0;
  EXPECT_EQ(zero.error_percent(), 0.0);
  EXPECT_TRUE(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(pearson({1}, {2})));
}

TEST(Crosscheck, DifferentPackagesAreBadInput) {
  auto sim = loaded("s", simulated_profile(), {});
  auto dev = loaded("d", simulated_profile(), {});
  sim.result.package_digest = "fnv1a64:0000000000000001";
  dev.result.package_digest = "fnv1a64:0000000000000002";
  EXPECT_THROW(crosscheck(sim, dev, {}), InputError);
  dev.result.status = "failed";
  dev.result.detail = "hazard";
  dev.result.package_digest = sim.result.package_digest;
  const Crosscheck c = crosscheck(sim, dev, {});
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_EQ(c.failures[0], "d: the run failed (runner test): hazard");
}

// One invocation against two is not a comparison of the same program's cycles: bad input.
TEST(Crosscheck, DifferentInvocationCountsAreBadInput) {
  auto sim = loaded("s", simulated_profile(), {});
  auto dev = loaded("d", simulated_profile(), {});
  dev.result.invocations = 2;
  try {
    crosscheck(sim, dev, {});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "d: 2 invocation(s), but the simulated run (s) had 1: run both with the same invocation count");
  }
}

TEST(Crosscheck, ReportFilesAreDeterministic) {
  const Crosscheck c =
      crosscheck(loaded("sim", simulated_profile(), {{"y", {1}}}), loaded("dev", device_profile(), {{"y", {1}}}), {});
  EXPECT_EQ(crosscheck_csv_text(c),
            "kind,name,label,invocation,epoch,phase,simulated_cycles,device_cycles,error_percent\n"
            "phase,phase 1,a.b,0,0,1,100,110,-9.0909\n"
            "phase,phase 2,c.d,0,0,2,1000,1000,0.0000\n"
            "kernel,add,,,,,50,40,25.0000\n"
            "kernel,gemm,,,,,180,180,0.0000\n"
            "total,total,,,,,1250,1300,-3.8462\n");
  EXPECT_EQ(outputs_csv_text(c), "binding,simulated_bytes,device_bytes,equal,first_difference\ny,1,1,yes,\n");
  const std::string a = testing::temp_dir("crosscheck_report_a"), b = testing::temp_dir("crosscheck_report_b");
  write_crosscheck_report(c, a);
  write_crosscheck_report(c, b);
  for (const char* file : {"crosscheck.csv", "outputs.csv", "scatter.svg", "scatter.png", "index.html"}) {
    EXPECT_EQ(testing::read_file(a + "/" + file), testing::read_file(b + "/" + file)) << file;
  }
  const std::string html = testing::read_file(a + "/index.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);  // the plot inline
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(testing::read_file(a + "/scatter.png").substr(1, 3), "PNG");
}

TEST(DeviceResult, WritesAndReadsBack) {
  const std::string dir = testing::temp_dir("device_result");
  DeviceResult r;
  r.runner = kSimulatorRunner;
  r.status = "ok";
  r.package = "p.yaml";
  r.package_digest = package_file_digest("abc");
  r.clock_hz = 1'850'000'000;
  r.total_cycles = 1250;
  r.outputs = {{"odd/name", output_file_name("odd/name"), {7, 8}}, {"y", output_file_name("y"), {}}};
  write_device_result(r, simulated_profile(), dir);
  EXPECT_EQ(output_file_name("odd/name"), "outputs/odd%2Fname.bin");
  EXPECT_EQ(output_file_name(".x"), "outputs/%2Ex.bin");
  const LoadedResult back = read_device_result(dir);
  EXPECT_EQ(back.result.package_digest, "fnv1a64:e71fa2190541574b");
  ASSERT_EQ(back.result.outputs.size(), 2u);
  EXPECT_EQ(back.result.outputs[0].bytes, (std::vector<uint8_t>{7, 8}));
  EXPECT_EQ(back.result.outputs[1].bytes.size(), 0u);
  EXPECT_EQ(back.profile.total_cycles, 1250u);
  EXPECT_EQ(result_json_text(back.result), testing::read_file(dir + "/result.json"));
}

}  // namespace
}  // namespace lockstep::replay
