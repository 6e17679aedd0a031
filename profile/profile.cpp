// The in-memory profile's small helpers: names, metadata lookup, the shared step table.
#include "profile/profile.hpp"

namespace lockstep::arch {

const char* profile_step_kind_name(ProfileStepKind kind) {
  switch (kind) {
    case ProfileStepKind::Exchange:
      return "exchange";
    case ProfileStepKind::Compute:
      return "compute";
    case ProfileStepKind::Synchronization:
      return "synchronization";
    case ProfileStepKind::Idle:
      return "idle";
  }
  return "unknown";
}

const char* activity_kind_name(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::Send:
      return "send";
    case ActivityKind::Receive:
      return "receive";
    case ActivityKind::PartnerBusy:
      return "partner-busy";
  }
  return "unknown";
}

const std::string* find_metadata(const ProfileStep& step, const std::string& name) {
  for (const auto& m : step.metadata) {
    if (m.name == name) return &m.value;
  }
  return nullptr;
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

uint64_t mix(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = mix(h, c);
  return mix(h, 0xff);
}

uint64_t step_hash(const ProfileStep& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, s.local_index);
  h = mix(h, s.phase);
  h = mix(h, static_cast<uint64_t>(s.kind));
  h = mix(h, s.event_cycles);
  h = mix(h, s.kernel);
  h = mix(h, s.operation);
  h = mix(h, s.phase_label);
  for (const auto& m : s.metadata) h = mix(mix(h, m.name), m.value);
  for (const auto& a : s.activities) {
    h = mix(mix(mix(h, static_cast<uint64_t>(a.kind)), a.start_cycle), a.end_cycle);
  }
  return h;
}

}  // namespace

ProfileStepTable::ProfileStepTable(std::vector<ProfileStep>& steps) : steps_(steps) {
  for (uint32_t i = 0; i < steps_.size(); ++i) by_hash_.emplace(step_hash(steps_[i]), i);
}

uint32_t ProfileStepTable::add(ProfileStep step) {
  const uint64_t h = step_hash(step);
  auto [begin, end] = by_hash_.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    if (steps_[it->second] == step) return it->second;
  }
  const auto index = static_cast<uint32_t>(steps_.size());
  steps_.push_back(std::move(step));
  by_hash_.emplace(h, index);
  return index;
}

}  // namespace lockstep::arch
