#pragma once
// A cycle profile: per tile, one sample per executed step (start and end cycle, kind,
// phase, epoch, operation, kernel, metadata, exchange activities). On disk it is the public
// IPU21 stack's profile schema plus Lockstep's own fields (profile/profile.capnp,
// docs/profiles.md), so profiles captured on the chip by that stack read too.
// In memory the steps are shared: a sample names its step by index, because a Repeat runs
// the same step once per iteration and only the epoch differs.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace lockstep::arch {

inline constexpr uint32_t kProfileSchemaVersion = 5;  // the stack's; its reader takes 1..5
// The compact layout's schemaVersion ("LS" and 5): outside the stack's 1..5, so the stack's
// readers refuse a compact file instead of misreading its samples (docs/profiles.md).
inline constexpr uint32_t kProfileCompactSchemaVersion = 0x4c530005u;
inline constexpr uint32_t kProfileLockstepVersion = 1;      // Lockstep's fields; 0 = a stack profile
inline constexpr uint32_t kExchangePhaseBit = 0x80000000u;  // Step.phase of exchange steps

enum class ProfileStepKind : uint8_t { Exchange = 0, Compute = 1, Synchronization = 2, Idle = 3 };
enum class ActivityKind : uint8_t { Send = 0, Receive = 1, PartnerBusy = 2 };

const char* profile_step_kind_name(ProfileStepKind kind);  // "exchange", "compute", ...
const char* activity_kind_name(ActivityKind kind);         // "send", "receive", "partner-busy"

// Event-cycle offsets within an exchange phase, from its sync (the barrier release).
struct ExchangeActivity {
  ActivityKind kind = ActivityKind::Send;
  uint32_t start_cycle = 0;
  uint32_t end_cycle = 0;
  bool operator==(const ExchangeActivity&) const = default;
};

struct ProfileMetadata {
  std::string name;
  std::string value;
  bool operator==(const ProfileMetadata&) const = default;
};

// The schema's Step less its epoch (which lives in the sample).
struct ProfileStep {
  uint32_t local_index = 0;  // the step's index in its tile's program (pre-order)
  uint32_t phase = 0;        // kExchangePhaseBit | phase id for exchange steps; else local index
  std::string operation;
  ProfileStepKind kind = ProfileStepKind::Compute;
  std::string kernel;                        // kernel symbol, "exchange", "sync", "repeat", "patch", "idle"
  std::vector<ProfileMetadata> metadata;     // first entry "reason" where the step has one
  std::vector<ExchangeActivity> activities;  // exchange steps: this tile's send/receive/busy
  uint32_t event_cycles = 0;                 // exchange steps: the phase horizon
  std::string phase_label;                   // Lockstep: the exchange phase's label (its own or the next one)
  bool operator==(const ProfileStep&) const = default;
};

struct CycleSample {
  uint64_t start_cycle = 0;
  uint64_t end_cycle = 0;
  uint32_t step = 0;        // index into Profile::steps
  uint32_t epoch = 0;       // Repeat iteration (nested Repeats: linear index of the path)
  uint32_t invocation = 0;  // back-to-back invocation of the resident program
  bool operator==(const CycleSample&) const = default;
};

struct TileProfile {
  uint32_t physical_tile = 0;
  uint32_t logical_tile = 0;
  std::vector<CycleSample> samples;  // in start order
  bool operator==(const TileProfile&) const = default;
};

struct Profile {
  uint32_t schema_version = kProfileSchemaVersion;
  uint32_t lockstep_version = kProfileLockstepVersion;
  uint64_t clock_hz = 0;
  std::string producer;  // "lockstep 0.1.0 (commit ...)"
  std::string source;    // the package (or capture phase) that ran
  std::string machine_name;
  uint64_t total_cycles = 0;
  std::vector<ProfileStep> steps;  // distinct steps, shared by samples
  std::vector<TileProfile> tiles;  // by physical tile
  bool operator==(const Profile&) const = default;
};

// The value of metadata `name`, or nullptr.
const std::string* find_metadata(const ProfileStep& step, const std::string& name);

// Builds Profile::steps without duplicates.
class ProfileStepTable {
 public:
  explicit ProfileStepTable(std::vector<ProfileStep>& steps);
  uint32_t add(ProfileStep step);  // the index of an equal step, added if new

 private:
  std::vector<ProfileStep>& steps_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
};

// Reads a profile Lockstep or the stack wrote. InputError "file: what" for a truncated,
// foreign or malformed file, or a schema or Lockstep version this build does not know.
// A stack profile's 32-bit cycles are unwrapped from its first tile's first sample.
Profile read_profile(const std::string& path);
Profile parse_profile(const uint8_t* data, size_t size, const std::string& file_name);
// Writes atomically (temporary name, then rename). Cycles above 2^32 keep their high bits
// in Lockstep's startCycleHigh field. Compact: each step once in Profile.steps, samples
// refer to it (Lockstep reads it; the stack's reader would see samples without steps).
// Inline: the stack's layout, every sample with its whole step (much larger).
enum class ProfileLayout : uint8_t { Compact, Inline };
void write_profile(const Profile& profile, const std::string& path, ProfileLayout layout = ProfileLayout::Compact);

}  // namespace lockstep::arch
