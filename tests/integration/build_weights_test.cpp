// `lockstep build --weights FILE.safetensors`: real weights by their SigLIP tensor names. A
// file holding exactly the seeded weights of seed 5 must give the very package that
// `--weight-seed 5` gives; a missing tensor or a wrong shape is one line, exit 2, no output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "formats/safetensors.hpp"
#include "support/test_support.hpp"
#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::testing {
namespace {

const std::string kTiny = "configs/workloads/vit-tiny.yaml";

// Every tensor of vit-tiny's seeded weights (seed 5) as float32; `skip` leaves one out and
// `narrow` drops the last value of one.
std::string write_weights(const std::string& dir, const std::string& skip = "", const std::string& narrow = "",
                          const std::function<void(const std::string&, std::vector<float>&)>& edit = {}) {
  const workload::Workload w = workload::load_workload(source_path(kTiny));
  workload::ModelWeights m = workload::seeded_weights(w, 5);
  std::vector<arch::SafeTensorData> tensors;
  for (const auto& t : workload::named_tensors(m, w)) {
    if (t.name == skip) continue;
    arch::SafeTensorData d{t.name, "F32", {t.shape.begin(), t.shape.end()}, {}};
    std::vector<float> values = *t.values;
    if (edit) edit(t.name, values);
    if (t.name == narrow) {
      values.pop_back();
      d.shape.back() -= 1;
      if (d.shape.size() > 1) values.resize(d.shape[0] * d.shape[1]);
    }
    d.data.resize(values.size() * 4);
    std::memcpy(d.data.data(), values.data(), d.data.size());
    tensors.push_back(std::move(d));
  }
  const std::string path = dir + "/weights.safetensors";
  arch::write_safetensors(path, tensors, {});
  return path;
}

TEST(BuildWeights, AFileOfTheSeededWeightsGivesTheSeededPackage) {
  const std::string dir = temp_dir("build_weights");
  const std::string weights = write_weights(dir);
  auto r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/file.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"build", source_path(kTiny), "--weight-seed", "5", "-o", dir + "/seed.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/file.lkspkg"), read_file(dir + "/seed.lkspkg"));
  r = run_lockstep({"build", source_path(kTiny), "--weight-seed", "6", "-o", dir + "/other.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(dir + "/other.lkspkg"), read_file(dir + "/seed.lkspkg"));
}

TEST(BuildWeights, MissingTensorOrWrongShapeIsOneLineExitTwo) {
  const std::string dir = temp_dir("build_weights_bad");
  std::string weights = write_weights(dir, "encoder.layers.1.mlp.fc1.weight");
  auto r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(weights + ": tensor 'encoder.layers.1.mlp.fc1.weight': missing"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.lkspkg"));
  weights = write_weights(dir, "", "encoder.layers.0.self_attn.qkv.bias");
  r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tensor 'encoder.layers.0.self_attn.qkv.bias': shape: expected (768,), got (767,)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.lkspkg"));
}

// NaN or inf in a weight is refused naming the tensor and the element (it would give an all-NaN
// output and "cosine nan"); --allow-non-finite keeps it.
TEST(BuildWeights, NonFiniteWeightIsOneLineExitTwo) {
  const std::string dir = temp_dir("build_weights_nan");
  const std::string weights = write_weights(dir, "", "", [](const std::string& name, std::vector<float>& v) {
    if (name == "encoder.layers.1.mlp.fc1.weight") v[7] = std::numeric_limits<float>::quiet_NaN();
  });
  auto r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(weights + ": tensor 'encoder.layers.1.mlp.fc1.weight': element 7 is nan"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.lkspkg"));
  r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg", "--allow-non-finite"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Weights beyond FP8's range saturate: the build goes on (the package is what the chip would
// run) but warns, naming the tensor and how many values were clipped.
TEST(BuildWeights, SaturatingWeightsAreWarnedOfByTensor) {
  const std::string dir = temp_dir("build_weights_saturate");
  const std::string weights = write_weights(dir, "", "", [](const std::string& name, std::vector<float>& v) {
    if (name == "encoder.layers.0.mlp.fc2.weight") {
      for (float& x : v) x *= 1000;
    }
  });
  const auto r = run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[warning] " + weights + ": tensor 'encoder.layers.0.mlp.fc2.weight': "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("saturate"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fc1.weight"), std::string::npos) << r.err;  // the others are in range
}

// `run --reference-weights FILE`: the reference also runs on the weights as the user gave them,
// before quantisation, so clipping shows: against the package's (clipped) weights the output
// agrees, against the file's it does not; with weights in range the two agree alike.
TEST(BuildWeights, ReferenceOnTheUnquantisedWeightsShowsWhatSaturationCost) {
  const std::string dir = temp_dir("build_weights_reference");
  const std::string weights = write_weights(dir, "", "", [](const std::string& name, std::vector<float>& v) {
    if (name == "encoder.layers.0.mlp.fc2.weight") {
      for (float& x : v) x *= 1000;
    }
  });
  ASSERT_EQ(run_lockstep({"build", source_path(kTiny), "--weights", weights, "-o", dir + "/x.lkspkg"}).exit_code, 0);
  const auto r = run_lockstep({"run", dir + "/x.lkspkg", "--reference-weights", weights, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["reference"].size(), 2u);
  EXPECT_EQ(j["reference"][0]["weights"], "package");
  EXPECT_EQ(j["reference"][1]["weights"], "unquantised");
  const double clipped = j["reference"][0]["cosine"], given = j["reference"][1]["cosine"];
  std::printf("saturated fc2 x1000: cosine %.9f against the package's weights, %.9f against the file's\n", clipped,
              given);
  EXPECT_GT(clipped, 0.9999);
  EXPECT_LT(given, clipped - 0.01);
  const std::string plain = write_weights(temp_dir("build_weights_reference_plain"));
  ASSERT_EQ(run_lockstep({"build", source_path(kTiny), "--weights", plain, "-o", dir + "/p.lkspkg"}).exit_code, 0);
  const auto text = run_lockstep({"run", dir + "/p.lkspkg", "--reference-weights", plain});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // In range, the unquantised reference differs from the package's by FP8 rounding alone.
  const size_t at = text.out.find("\nreference: unquantised weights: cosine 0.99");
  ASSERT_NE(at, std::string::npos) << text.out;
  std::printf("weights in range:%s", text.out.substr(at, text.out.find('\n', at + 1) - at + 1).c_str());
}

}  // namespace
}  // namespace lockstep::testing
