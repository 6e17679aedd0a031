# The package on disk: an 8-byte magic "LKSPKG01" followed by one flat (unpacked) Cap'n Proto
# message whose root is Package. Mirrors formats/package.hpp field for field; docs/formats.md
# describes the meaning of every field. Readers reject a `version` they do not know.
@0xc8121b83165e9122;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("lockstep::arch::schema");

struct Package {
  version @0 :UInt32;
  machineName @1 :Text;
  machineDigest @2 :Text;
  phases @3 :List(Phase);
  tiles @4 :List(TileProgram);
  bindings @5 :List(Binding);
  expectations @6 :List(Expectation);
  workload @7 :Text;  # the workload YAML text of a whole model (`lockstep build`); empty otherwise
  host @8 :HostSession;  # absent (null) in packages without host phases
}

struct Phase {
  id @0 :UInt32;
  label @1 :Text;
  executionCount @2 :UInt32;
  operation @3 :Text;
}

struct Segment {
  address @0 :UInt32;
  size @1 :UInt32;
  fill :union {
    bytes @2 :Data;
    zero @3 :Void;
    tokens @4 :UInt64;  # the token seed
  }
}

struct TableRegion {
  address @0 :UInt32;
  size @1 :UInt32;
}

struct TileProgram {
  tile @0 :UInt32;
  segments @1 :List(Segment);
  table @2 :TableRegion;
  steps @3 :List(Step);
}

struct Step {
  union {
    sync @0 :UInt32;  # the sync zone
    exchange @1 :ExchangeStep;
    kernel @2 :KernelStep;
    repeat @3 :RepeatStep;
    patch @4 :PatchStep;
    host @5 :HostStep;
  }
}

struct ExchangeStep {
  phase @0 :UInt32;
  hasRowAddress @1 :Bool;
  rowAddress @2 :UInt32;
  incomingBase @3 :UInt32;
  hasIncomingMux @4 :Bool;
  incomingMux @5 :UInt32;
  incomingFormat @6 :UInt32;
  hasIncomingMuxpair @7 :Bool;
  incomingMuxpair @8 :UInt32;
}

struct Operand {
  address @0 :UInt32;
  indirect @1 :Bool;
  offset @2 :Int32;  # indirect only: bytes added to the loaded pointer
}

struct KernelStep {
  name @0 :Text;
  operands @1 :List(Operand);
  scalars @2 :List(Int64);
}

struct IteratedPointer {
  address @0 :UInt32;
  stride @1 :Int32;
}

struct RepeatStep {
  count @0 :UInt32;
  body @1 :List(Step);
  pointers @2 :List(IteratedPointer);
}

enum PatchMethod {
  helper @0;
  bulk @1;
  setup @2;
}

struct PatchEntry {
  wordAddress @0 :UInt32;
  values @1 :List(UInt32);
}

struct PatchStep {
  method @0 :PatchMethod;
  entries @1 :List(PatchEntry);
}

enum HostDirection {
  toTile @0;
  toHost @1;
}

struct HostTransfer {
  direction @0 :HostDirection;
  tileAddress @1 :UInt32;
  hostAddress @2 :UInt32;
  bytes @3 :UInt32;
}

struct HostStep {
  transfers @0 :List(HostTransfer);
}

struct Slice {
  tile @0 :UInt32;
  address @1 :UInt32;
  bytes @2 :UInt32;
}

enum BindingKind {
  input @0;
  output @1;
  weight @2;
}

enum ElementType {
  bytes @0;
  float16 @1;
  float32 @2;
}

struct Binding {
  name @0 :Text;
  kind @1 :BindingKind;
  slices @2 :List(Slice);
  element @3 :ElementType;
  shape @4 :List(UInt32);
}

struct Expectation {
  tile @0 :UInt32;
  address @1 :UInt32;
  size @2 :UInt32;
  bytes @3 :Data;
  hasDigest @4 :Bool;
  digest @5 :UInt64;
}

struct HostFileSlice {
  hostAddress @0 :UInt32;
  fileOffset @1 :UInt64;
  bytes @2 :UInt32;
}

struct HostCallSpec {
  name @0 :Text;
  command @1 :UInt32;
  phases @2 :UInt32;
  inputs @3 :List(HostFileSlice);
  outputs @4 :List(HostFileSlice);
  inputBatchEnds @5 :List(UInt32);
  outputBatchEnds @6 :List(UInt32);
  inputBindings @7 :List(Text);
  outputBindings @8 :List(Text);
}

struct HostSession {
  arenaBytes @0 :UInt32;
  commandAddress @1 :UInt32;
  calls @2 :List(HostCallSpec);
}
