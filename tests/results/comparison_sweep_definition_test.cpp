// Sweep definitions: the embedded frontier sweep, and errors with file, line and key.
#include <gtest/gtest.h>

#include "io/errors.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_sweep_definition(text, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepDefinition, EmbeddedFrontierSweep) {
  const auto sweep = load_sweep_definition(kDefaultSweep);
  ASSERT_EQ(sweep.configurations.size(), 19u);
  EXPECT_EQ(sweep.configurations.front(), "latency");
  EXPECT_EQ(sweep.configurations[3], "S16");
  EXPECT_EQ(sweep.configurations.back(), "B4096");
  EXPECT_EQ(sweep.reference.name(), "B1024");
  EXPECT_EQ(sweep.reference.width, compiler::Width::Word32);
  EXPECT_EQ(sweep.max_row_growth_bytes, (std::vector<uint64_t>{64, 256, 1024}));
}

TEST(SweepDefinition, Errors) {
  EXPECT_EQ(error_of("configurations: [S64, X1]\nreference: S64\n"),
            "s.yaml:1: configurations[1]: 'X1' is not a configuration name (latency, automatic, "
            "remaining-combined, S<W> or B<W>)");
  EXPECT_EQ(error_of("configurations: [S64, S64]\nreference: S64\n"),
            "s.yaml:1: configurations[1]: 'S64' is listed twice");
  EXPECT_EQ(error_of("configurations: [S64]\nreference: B1024\n"),
            "s.yaml:2: reference: 'B1024' is not one of the configurations");
  EXPECT_EQ(error_of("configurations: [S64]\nreference: S64\nmax_row_growth_bytes: [64, -1]\n"),
            "s.yaml:3: max_row_growth_bytes[1]: expected an unsigned integer, got '-1'");
  EXPECT_EQ(error_of("configurations: [S64]\nreference: S64\nwindows: 3\n"), "s.yaml:3: windows: unknown key");
  EXPECT_EQ(error_of("reference: S64\n").rfind("s.yaml:1: configurations: missing required key", 0), 0u);
}

TEST(SweepDefinition, PairedReferenceAndNoWindows) {
  const auto sweep = parse_sweep_definition("configurations: [automatic, B256]\nreference: B256p\n", "s.yaml");
  EXPECT_EQ(sweep.reference.config, "B256");
  EXPECT_EQ(sweep.reference.width, compiler::Width::Paired64);
  EXPECT_TRUE(sweep.max_row_growth_bytes.empty());
}

}  // namespace
}  // namespace lockstep::replay
