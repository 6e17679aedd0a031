// `run --input FILE.npy --output FILE.npy --invocations N`: typed bindings read and written
// as NumPy arrays of their element type and shape; bad arrays are refused before the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/npy.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

std::string package() { return source_path("tests/data/packages/typed_bindings.yaml"); }

std::vector<uint8_t> twelve_bytes() {
  std::vector<uint8_t> bytes(12);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(0x31 + 7 * i);
  return bytes;
}

TEST(RunNpy, InputArrayTravelsAndComesBackAsTheOutputArray) {
  const std::string dir = temp_dir("run_npy");
  const std::string in = dir + "/payload.npy", out = dir + "/received.npy";
  arch::write_npy(in, arch::make_npy(arch::NpyType::kFloat16, {2, 3}, twelve_bytes()));
  // The bytes are a payload, not numbers: the last half (0x7e77) is a NaN, kept on request.
  const auto r = run_lockstep({"run", package(), "--input", in, "--output", out, "--allow-non-finite"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const arch::NpyArray received = arch::read_npy(out);
  EXPECT_EQ(received.type, arch::NpyType::kFloat32);
  EXPECT_EQ(received.shape, (std::vector<uint64_t>{3}));
  EXPECT_EQ(received.data, twelve_bytes());
}

TEST(RunNpy, WrongShapeOrDtypeIsOneLineExitTwoAndNothingWritten) {
  const std::string dir = temp_dir("run_npy_bad");
  const std::string in = dir + "/payload.npy", out = dir + "/received.npy";
  arch::write_npy(in, arch::make_npy(arch::NpyType::kFloat16, {3, 2}, twelve_bytes()));
  auto r = run_lockstep({"run", package(), "--input", "payload=" + in, "--output", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(in + ": shape: expected (2, 3), got (3, 2)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  arch::write_npy(in, arch::make_npy(arch::NpyType::kFloat32, {3}, twelve_bytes()));
  r = run_lockstep({"run", package(), "--input", in});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(in + ": dtype: expected <f2 (float16), got <f4 (float32)"), std::string::npos) << r.err;
  r = run_lockstep({"run", package(), "--output", dir + "/no/such/folder/x.npy"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = run_lockstep({"run", package(), "--input", "nothing=" + in});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no input binding 'nothing'"), std::string::npos) << r.err;
}

// A NaN or an infinity in a float input poisons every output: refused, naming the element.
TEST(RunNpy, NonFiniteInputIsRefusedNamingTheElement) {
  const std::string dir = temp_dir("run_npy_nan");
  const std::string in = dir + "/payload.npy", out = dir + "/received.npy";
  std::vector<uint8_t> bytes(12, 0);  // six FP16 zeros
  bytes[7] = 0x7c;                    // element 3: +inf (0x7c00)
  arch::write_npy(in, arch::make_npy(arch::NpyType::kFloat16, {2, 3}, bytes));
  auto r = run_lockstep({"run", package(), "--input", in, "--output", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(in + ": --input payload: element 3 is inf"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  bytes[7] = 0x7e;  // a NaN
  arch::write_npy(in, arch::make_npy(arch::NpyType::kFloat16, {2, 3}, bytes));
  r = run_lockstep({"run", package(), "--input", in});
  EXPECT_NE(r.err.find("element 3 is nan"), std::string::npos) << r.err;
  r = run_lockstep({"run", package(), "--input", in, "--allow-non-finite"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(RunNpy, InvocationsRunTheProgramBackToBack) {
  const auto r = run_lockstep({"run", package(), "--invocations", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["invocations"].size(), 3u);
  // The invocation loop is code (IPU21-DEVICE.md 8.1): each invocation ends with the count
  // test (4 instructions); the first pays the 3-instruction frame set-up, the others the
  // 2-instruction jump back, 6 cycles less.
  EXPECT_EQ(j["invocations"][1]["cycles"], j["invocations"][2]["cycles"]);
  EXPECT_EQ(j["invocations"][0]["cycles"].get<uint64_t>(), j["invocations"][1]["cycles"].get<uint64_t>() + 6);
  EXPECT_EQ(j["invocations"][2]["end_cycle"], j["total_cycles"]);
  EXPECT_EQ(j["executions"].size(), 3u);
}

}  // namespace
}  // namespace lockstep::testing
