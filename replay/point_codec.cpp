#include "replay/point_codec.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace lockstep::replay {
namespace {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T get() {
    T value;
    need(sizeof value);
    std::memcpy(&value, in_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string get_string() {
    const auto n = get<uint64_t>();
    need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  void finish() const {
    if (at_ != in_.size()) throw std::runtime_error("point result: trailing bytes");
  }

 private:
  void need(uint64_t n) const {
    if (n > in_.size() - at_) throw std::runtime_error("point result: truncated");
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode_point_result(const PointResult& r) {
  Writer w;
  w.put<uint32_t>(r.spec.phase);
  w.put(r.spec.config);
  w.put<uint8_t>(r.spec.paired);
  w.put(r.label);
  w.put(r.execution_count);
  w.put(r.iterations);
  w.put(r.horizon);
  w.put(r.compiled_horizon);
  w.put(r.lower_bound);
  w.put(r.max_row_bytes);
  w.put(r.total_row_bytes);
  w.put(r.table_bytes_shared);
  w.put(r.table_bytes_unshared);
  w.put(r.patch_calls);
  w.put(r.patch_words);
  w.put(r.compile_ms);
  w.put(r.simulate_ms);
  w.put(r.executions);
  w.put(r.words_checked);
  w.put(r.mismatch_count);
  w.put<uint64_t>(r.mismatches.size());
  for (const auto& m : r.mismatches) w.put(m);
  w.put(r.hazard_count);
  w.put<uint64_t>(r.hazards.size());
  for (const auto& h : r.hazards) w.put(h);
  w.put(r.expectation_failures);
  w.put(r.payload_digest);
  w.put(r.error);
  w.put<int32_t>(r.error_exit_code);
  return w.take();
}

PointResult decode_point_result(std::string_view bytes) {
  Reader in(bytes);
  PointResult r;
  r.spec.phase = in.get<uint32_t>();
  r.spec.config = in.get_string();
  r.spec.paired = in.get<uint8_t>() != 0;
  r.label = in.get_string();
  r.execution_count = in.get<uint32_t>();
  r.iterations = in.get<uint32_t>();
  r.horizon = in.get<uint32_t>();
  r.compiled_horizon = in.get<uint32_t>();
  r.lower_bound = in.get<uint32_t>();
  r.max_row_bytes = in.get<uint32_t>();
  r.total_row_bytes = in.get<uint64_t>();
  r.table_bytes_shared = in.get<uint32_t>();
  r.table_bytes_unshared = in.get<uint32_t>();
  r.patch_calls = in.get<uint32_t>();
  r.patch_words = in.get<uint32_t>();
  r.compile_ms = in.get<double>();
  r.simulate_ms = in.get<double>();
  r.executions = in.get<uint32_t>();
  r.words_checked = in.get<uint64_t>();
  r.mismatch_count = in.get<uint64_t>();
  const auto mismatches = in.get<uint64_t>();
  for (uint64_t i = 0; i < mismatches; ++i) r.mismatches.push_back(in.get<Mismatch>());
  r.hazard_count = in.get<uint64_t>();
  const auto hazards = in.get<uint64_t>();
  for (uint64_t i = 0; i < hazards; ++i) r.hazards.push_back(in.get_string());
  r.expectation_failures = in.get<uint64_t>();
  r.payload_digest = in.get<uint64_t>();
  r.error = in.get_string();
  r.error_exit_code = in.get<int32_t>();
  in.finish();
  return r;
}

}  // namespace lockstep::replay
