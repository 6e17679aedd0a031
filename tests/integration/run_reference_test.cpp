// `run --reference`: a package made by `lockstep build` records its workload, so the run holds
// the simulated output against the separate FP32 reference of the weights the package holds and
// the input the run uses; a package that is not a whole model is refused with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "formats/npy.hpp"
#include "support/test_support.hpp"
#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::testing {
namespace {

const char* const kWorkload = "configs/workloads/vit-tiny.yaml";

// vit-tiny built by the command (seeded weights 1, input 1), once for the suite.
const std::string& tiny_package() {
  static const std::string path = [] {
    const std::string package = temp_dir("run_reference") + "/tiny.lkspkg";
    const auto r = run_lockstep({"build", source_path(kWorkload), "-o", package});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return package;
  }();
  return path;
}

nlohmann::json run_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", tiny_package(), "--reference", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_lockstep(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(RunReference, BuiltModelAgreesWithItsFp32Reference) {
  const nlohmann::json j = run_json({});
  ASSERT_EQ(j["reference"].size(), 1u);
  const double cosine = j["reference"][0]["cosine"], error = j["reference"][0]["max_abs_error"];
  std::printf("run --reference vit-tiny: %llu cycles, %.6f ms, cosine %.9f, max abs error %.6f\n",
              j["total_cycles"].get<unsigned long long>(), j["total_milliseconds"].get<double>(), cosine, error);
  // The in-process whole-model test measured cosine 0.999997704, max abs error 0.00975.
  EXPECT_GT(cosine, 0.9999);
  EXPECT_LT(error, 0.05);
  EXPECT_TRUE(j["ok"]);
}

TEST(RunReference, TextFormPrintsOneLine) {
  const auto r = run_lockstep({"run", tiny_package(), "--reference"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ntotal cycles "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms\nreference: cosine 0.99999"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("last invocation"), std::string::npos) << r.out;
}

// With --invocations N every invocation's output is compared (the seed checks each of its
// calls): a line and a JSON entry per invocation. The layer Repeat's iterated weight pointers
// start from their initial addresses at every entry (the device keeps them in the Repeat's
// frame), so later invocations read the same weights as the first; without that the second's
// output was NaN (weights past the last layer).
TEST(RunReference, EveryInvocationIsCompared) {
  const auto r = run_lockstep({"run", tiny_package(), "--reference", "--invocations", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"\ninvocation 2: ", "\nreference: invocation 0: cosine ",
                           "\nreference: invocation 1: cosine ", "\nreference: invocation 2: cosine "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  const nlohmann::json j = run_json({"--invocations", "3"});
  ASSERT_EQ(j["reference"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["reference"][i]["invocation"], i);
    EXPECT_GT(j["reference"][i]["cosine"].get<double>(), 0.9999) << i;
    // The same input through the same weights: every invocation gives the same output.
    EXPECT_EQ(j["reference"][i]["max_abs_error"], j["reference"][0]["max_abs_error"]) << i;
  }
}

TEST(RunReference, PackageWithoutWorkloadIsRefused) {
  const std::string package = source_path("tests/integration/packages/p2p_3w.yaml");
  const auto r = run_lockstep({"run", package, "--reference"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(package + ": --reference needs a package made by `lockstep build` (no workload recorded)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// Another image through --input: the reference follows it (held against the default image's
// reference the output would disagree).
TEST(RunReference, ReferenceFollowsTheInputArray) {
  const workload::Workload w = workload::load_workload(source_path(kWorkload));
  const std::vector<uint16_t> patches = workload::seeded_patches(w, 2);
  const std::string image = temp_dir("run_reference_input") + "/image2.npy";
  std::vector<uint8_t> bytes(patches.size() * 2);
  std::memcpy(bytes.data(), patches.data(), bytes.size());
  arch::write_npy(image, arch::make_npy(arch::NpyType::kFloat16, {w.rows(), w.patch_values()}, bytes));
  const nlohmann::json other = run_json({"--input", "patches=" + image});
  const nlohmann::json seeded = run_json({});
  std::printf("run --reference vit-tiny, input seed 2: cosine %.9f, max abs error %.6f\n",
              other["reference"][0]["cosine"].get<double>(), other["reference"][0]["max_abs_error"].get<double>());
  EXPECT_GT(other["reference"][0]["cosine"].get<double>(), 0.9999);
  EXPECT_LT(other["reference"][0]["max_abs_error"].get<double>(), 0.05);
  EXPECT_NE(other["reference"][0]["max_abs_error"], seeded["reference"][0]["max_abs_error"]);
}

}  // namespace
}  // namespace lockstep::testing
