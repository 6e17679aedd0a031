// Issue 26's input edges as a user meets them: each is exit 2 with one line naming the file
// and what is wrong, and nothing written. A .npy array or a safetensors file naming a tensor
// twice given to `build --weights`; a runner whose output does not end with a newline, whose
// `error:` line must still start a line of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "formats/npy.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::run_lockstep;
namespace fs = std::filesystem;

// Exit 2, stderr exactly "error: `message`\n", and nothing at `output`.
void expect_refused(const testing::CommandResult& r, const std::string& message, const std::string& output) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "error: " + message + "\n");
  EXPECT_FALSE(fs::exists(output)) << output;
}

// The 8-byte length, then exactly this JSON and these bytes.
std::string safetensors_file(const std::string& json, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>(uint64_t{json.size()} >> (8 * i));
  return out + json + data;
}

class CommandInputEdges : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = testing::temp_dir("input_edges_cli"); }
  static std::string dir_;
};
std::string CommandInputEdges::dir_;

TEST_F(CommandInputEdges, BuildNamesANpyArrayGivenAsWeights) {
  const std::string weights = dir_ + "/weights.npy", output = dir_ + "/npy.lkspkg";
  arch::write_npy(weights, arch::make_npy(arch::NpyType::kFloat32, {4}, std::vector<uint8_t>(16)));
  expect_refused(run_lockstep({"build", "vit-tiny", "--weights", weights, "-o", output}),
                 weights + ": is a .npy array, not a safetensors file", output);
}

TEST_F(CommandInputEdges, BuildRefusesWeightsNamingATensorTwice) {
  const std::string weights = dir_ + "/twice.safetensors", output = dir_ + "/twice.lkspkg";
  const std::string entry = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  testing::write_file(weights, safetensors_file(R"({"encoder.layers.0.mlp.fc1.weight": )" + entry +
                                                    R"(, "encoder.layers.0.mlp.fc1.weight": )" + entry + "}",
                                                "0123"));
  expect_refused(run_lockstep({"build", "vit-tiny", "--weights", weights, "-o", output}),
                 weights + ": tensor 'encoder.layers.0.mlp.fc1.weight': named twice in the header", output);
}

class RunnerOutputEdges : public CommandInputEdges {
 protected:
  testing::CommandResult device_run(const std::string& runner, const std::string& output,
                                    const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"device", "run", package(), "--runner", runner, "-o", output};
    args.insert(args.end(), more.begin(), more.end());
    return run_lockstep(args);
  }
  static std::string package() { return testing::source_path("tests/integration/packages/back_to_back.yaml"); }
};

TEST_F(RunnerOutputEdges, UnfinishedStdoutLineEndsBeforeTheErrorLine) {
  const std::string output = dir_ + "/partial";
  const auto r = device_run("printf 'partial'; exit 3", output);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "partial\n"
            "error: device run: the runner exited with status 3; no result folder written\n");
  EXPECT_FALSE(fs::exists(output));
}

TEST_F(RunnerOutputEdges, UnfinishedStderrLineEndsToo) {
  const auto r = device_run("printf 'to stderr' >&2; exit 3", dir_ + "/stderr");
  EXPECT_EQ(r.err,
            "to stderr\n"
            "error: device run: the runner exited with status 3; no result folder written\n");
}

TEST_F(RunnerOutputEdges, FinishedLinesGetNoBlankLineAndKeepTheirOrder) {
  const auto r = device_run("echo one; echo two >&2; echo three; exit 3", dir_ + "/lines");
  EXPECT_EQ(r.err,
            "one\ntwo\nthree\n"
            "error: device run: the runner exited with status 3; no result folder written\n");
}

TEST_F(RunnerOutputEdges, UnfinishedLineOfARunnerStoppedByTheTimeoutEnds) {
  const std::string output = dir_ + "/slow";
  const auto r = device_run("printf 'slow'; sleep 30", output, {"--timeout", "0.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("slow\nerror: device run: the runner took longer than --timeout", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(output));
}

// A binding given twice (once by default name, once by NAME=) is refused: the last used to win.
TEST_F(CommandInputEdges, RunRefusesTheSameInputGivenTwice) {
  const std::string package = testing::source_path("tests/data/packages/typed_bindings.yaml");
  const std::string input = dir_ + "/payload.npy", output = dir_ + "/received.npy";
  arch::write_npy(input, arch::make_npy(arch::NpyType::kFloat16, {2, 3}, std::vector<uint8_t>(12)));
  expect_refused(run_lockstep({"run", package, "--input", input, "--input", "payload=" + input, "--output", output}),
                 "--input payload=" + input + ": input 'payload' is already given by --input " + input, output);
}

}  // namespace
}  // namespace lockstep
