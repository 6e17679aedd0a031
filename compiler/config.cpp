// parse_config: the names of the scheduling configurations (docs/scheduling.md).
#include <charconv>
#include <string>

#include "compiler/compile.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

constexpr uint32_t kMaxChunkWords = 1u << 20;

// Width suffixes: a fixed Paired64 width, or a policy that schedules both widths and picks.
struct WidthSuffix {
  const char* text;
  Width width;
  WidthPolicy policy;
};
constexpr WidthSuffix kWidthSuffixes[] = {
    {"+paired", Width::Paired64, WidthPolicy::Fixed},
    {"+latency-width", Width::Word32, WidthPolicy::LatencyOriented},
    {"+storage-width", Width::Word32, WidthPolicy::StorageFirst},
};

[[noreturn]] void reject(const std::string& name, const std::string& what) {
  throw InputError("config '" + name + "': " + what +
                   " (expected latency, automatic, remaining-combined, S<W> or B<W>, optionally +paired, "
                   "+latency-width or +storage-width)");
}

uint32_t parse_words(const std::string& full, const std::string& digits) {
  if (digits.empty()) reject(full, "missing word count");
  uint32_t value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc() || ptr != end || digits[0] == '0') reject(full, "bad word count '" + digits + "'");
  if (value > kMaxChunkWords) reject(full, "word count above " + std::to_string(kMaxChunkWords));
  return value;
}

}  // namespace

ScheduleConfig parse_config(const std::string& name) {
  ScheduleConfig config;
  config.name = name;
  std::string base = name;
  for (const WidthSuffix& s : kWidthSuffixes) {
    const std::string suffix = s.text;
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      base.resize(base.size() - suffix.size());
      config.width = s.width;
      config.width_policy = s.policy;
      break;
    }
  }
  if (base == "latency") {
    config.order = OrderKind::Latency;
  } else if (base == "automatic") {
    config.order = OrderKind::Automatic;
  } else if (base == "remaining-combined") {
    config.order = OrderKind::RemainingCombined;
  } else if (!base.empty() && (base[0] == 'S' || base[0] == 'B')) {
    config.order = base[0] == 'S' ? OrderKind::Stream : OrderKind::Balanced;
    config.words = parse_words(name, base.substr(1));
  } else {
    reject(name, "unknown configuration");
  }
  return config;
}

}  // namespace lockstep::compiler
