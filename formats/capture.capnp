@0xc4e1f0a7d35b9e21;
# Lockstep capture, version 1. On disk: the 8 bytes "LKSCAP01" then one flat
# (unpacked, single or multi segment) Cap'n Proto message whose root is Capture.
# Transfers are stored as parallel flat lists per phase, not a struct per transfer, so a
# 2-million-transfer capture reads with a handful of list accesses (see docs/formats.md).

$import "/capnp/c++.capnp".namespace("lockstep::arch::capture_schema");

struct Capture {
  version @0 :UInt32;
  machineName @1 :Text;
  phases @2 :List(Phase);
}

struct Phase {
  id @0 :UInt32;
  label @1 :Text;
  executionCount @2 :UInt32;
  operation @3 :Text;
  iterations @4 :UInt32;
  # One entry per transfer.
  sourceTiles @5 :List(UInt32);
  words @6 :List(UInt32);
  allowPaired @7 :List(Bool);
  # Transfer t's source addresses are sourceAddresses[t * iterations, (t + 1) * iterations).
  sourceAddresses @8 :List(UInt32);
  # Transfer t's destinations are entries [destinationStart[t], destinationStart[t + 1])
  # of destinationTiles / destinationAddresses; destinationStart has transfers + 1 entries.
  destinationStart @9 :List(UInt32);
  destinationTiles @10 :List(UInt32);
  destinationAddresses @11 :List(UInt32);
}
