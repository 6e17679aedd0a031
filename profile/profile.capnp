@0xa0e8a5be48f5ad89;
# Lockstep cycle profile: one flat (unpacked) Cap'n Proto message whose root is Profile,
# with no magic. Ordinals @0..@8 (Step), @0..@2 (CycleSample, TileProfile, Profile) and the
# enums are the public IPU21 stack's profile schema (docs/IPU21-DEVICE.md section 15,
# docs/profiles.md), so Lockstep reads profiles that stack captured on the chip; higher
# ordinals are Lockstep's own and read as their defaults from a stack profile. Lockstep
# writes the compact layout (steps once, samples point at them); `lockstep profile export
# --stack` writes the stack's layout (every sample carries its step inline).

$import "/capnp/c++.capnp".namespace("lockstep::arch::profile_schema");

enum StepKind {
  exchange @0;
  compute @1;
  synchronization @2;
  idle @3;
}

enum ExchangeActivityKind {
  send @0;
  receive @1;
  partnerBusy @2;
}

# Event-cycle offsets within the exchange phase, from the phase's sync.
struct ExchangeActivity {
  kind @0 :ExchangeActivityKind;
  startCycle @1 :UInt32;
  endCycle @2 :UInt32;
}

struct Metadata {
  name @0 :Text;
  value @1 :Text;
}

struct Step {
  localIndex @0 :UInt32;
  phase @1 :UInt32;
  epoch @2 :UInt32;
  operation @3 :Text;
  kind @4 :StepKind;
  kernel @5 :Text;
  metadata @6 :List(Metadata);
  exchangeActivities @7 :List(ExchangeActivity);
  exchangeEventCycles @8 :UInt32;
  # Lockstep: the label of the exchange phase the step belongs to (its own, or the next).
  phaseLabel @9 :Text;
  # Lockstep: which back-to-back invocation of the resident program (0 first).
  invocation @10 :UInt32;
}

struct CycleSample {
  step @0 :Step;
  startCycle @1 :UInt32;
  endCycle @2 :UInt32;
  # Lockstep: startCycle's bits above 32 (runs longer than 2^32 cycles).
  startCycleHigh @3 :UInt32;
  # Lockstep's compact layout: 1 + the index of this sample's step in Profile.steps, with
  # the epoch and invocation here and no inline step. 0: the step is inline (stack layout).
  stepIndex @4 :UInt32;
  epoch @5 :UInt32;
  invocation @6 :UInt32;
}

struct TileProfile {
  physicalTile @0 :UInt32;
  samples @1 :List(CycleSample);
  # Lockstep: the logical tile (0 in a stack profile, where only physical ids exist).
  logicalTile @2 :UInt32;
}

struct Profile {
  schemaVersion @0 :UInt32;
  clockHz @1 :UInt64;
  tiles @2 :List(TileProfile);
  # Lockstep: this format's own version (0 = a profile the stack wrote).
  lockstepVersion @3 :UInt32;
  # Lockstep: what wrote it ("lockstep 0.1.0 (commit ...)"), the run it profiles.
  producer @4 :Text;
  source @5 :Text;
  machineName @6 :Text;
  totalCycles @7 :UInt64;
  # Lockstep's compact layout: each distinct step once (a whole model repeats 25 thousand
  # steps in 1.7 million samples; inline, their exchange activities alone take 1.4 GB).
  steps @8 :List(Step);
}
