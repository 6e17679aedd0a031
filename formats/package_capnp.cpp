// The Cap'n Proto form of a package: magic + flat message (formats/package.capnp).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>

#include "formats/package.capnp.h"
#include "formats/package_io.hpp"
#include "io/atomic_file.hpp"
#include "io/capnp_words.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/parallel.hpp"
#include "io/utf8.hpp"

namespace lockstep::arch {

namespace {

namespace s = schema;

// ---- writing -------------------------------------------------------------------------

void write_steps(capnp::List<s::Step>::Builder out, const std::vector<Step>& steps);

void write_host_step(s::HostStep::Builder out, const HostStep& step) {
  auto transfers = out.initTransfers(static_cast<unsigned>(step.transfers.size()));
  for (unsigned i = 0; i < step.transfers.size(); ++i) {
    const HostTransfer& t = step.transfers[i];
    transfers[i].setDirection(static_cast<s::HostDirection>(t.direction));
    transfers[i].setTileAddress(t.tile_address);
    transfers[i].setHostAddress(t.host_address);
    transfers[i].setBytes(t.bytes);
  }
}

void write_step(s::Step::Builder out, const Step& step) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, SyncStep>) {
          out.setSync(v.zone);
        } else if constexpr (std::is_same_v<T, ExchangeStep>) {
          auto e = out.initExchange();
          e.setPhase(v.phase);
          e.setHasRowAddress(v.row_address.has_value());
          e.setRowAddress(v.row_address.value_or(0));
          e.setIncomingBase(v.incoming_base);
          e.setHasIncomingMux(v.incoming_mux.has_value());
          e.setIncomingMux(v.incoming_mux.value_or(0));
          e.setIncomingFormat(v.incoming_format);
          e.setHasIncomingMuxpair(v.incoming_muxpair.has_value());
          e.setIncomingMuxpair(v.incoming_muxpair.value_or(0));
        } else if constexpr (std::is_same_v<T, KernelStep>) {
          auto k = out.initKernel();
          k.setName(v.name);
          auto operands = k.initOperands(static_cast<unsigned>(v.operands.size()));
          for (unsigned i = 0; i < v.operands.size(); ++i) {
            operands[i].setAddress(v.operands[i].address);
            operands[i].setIndirect(v.operands[i].indirect);
            operands[i].setOffset(v.operands[i].offset);
          }
          auto scalars = k.initScalars(static_cast<unsigned>(v.scalars.size()));
          for (unsigned i = 0; i < v.scalars.size(); ++i) scalars.set(i, v.scalars[i]);
        } else if constexpr (std::is_same_v<T, RepeatStep>) {
          auto r = out.initRepeat();
          r.setCount(v.count);
          write_steps(r.initBody(static_cast<unsigned>(v.body.size())), v.body);
          auto pointers = r.initPointers(static_cast<unsigned>(v.pointers.size()));
          for (unsigned i = 0; i < v.pointers.size(); ++i) {
            pointers[i].setAddress(v.pointers[i].address);
            pointers[i].setStride(v.pointers[i].stride);
          }
        } else if constexpr (std::is_same_v<T, PatchStep>) {
          auto p = out.initPatch();
          p.setMethod(static_cast<s::PatchMethod>(v.method));
          auto entries = p.initEntries(static_cast<unsigned>(v.entries.size()));
          for (unsigned i = 0; i < v.entries.size(); ++i) {
            entries[i].setWordAddress(v.entries[i].word_address);
            auto values = entries[i].initValues(static_cast<unsigned>(v.entries[i].values.size()));
            for (unsigned j = 0; j < v.entries[i].values.size(); ++j) {
              values.set(j, v.entries[i].values[j]);
            }
          }
        } else {
          write_host_step(out.initHost(), v);
        }
      },
      step.kind);
}

void write_steps(capnp::List<s::Step>::Builder out, const std::vector<Step>& steps) {
  for (unsigned i = 0; i < steps.size(); ++i) write_step(out[i], steps[i]);
}

void write_host_slices(capnp::List<s::HostFileSlice>::Builder out, const std::vector<HostFileSlice>& slices) {
  for (unsigned i = 0; i < slices.size(); ++i) {
    out[i].setHostAddress(slices[i].host_address);
    out[i].setFileOffset(slices[i].file_offset);
    out[i].setBytes(slices[i].bytes);
  }
}

void write_words(capnp::List<uint32_t>::Builder out, const std::vector<uint32_t>& words) {
  for (unsigned i = 0; i < words.size(); ++i) out.set(i, words[i]);
}

void write_names(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& names) {
  for (unsigned i = 0; i < names.size(); ++i) out.set(i, names[i]);
}

void write_host_call(s::HostCallSpec::Builder out, const HostCallSpec& call) {
  out.setName(call.name);
  out.setCommand(call.command);
  out.setPhases(call.phases);
  write_host_slices(out.initInputs(static_cast<unsigned>(call.inputs.size())), call.inputs);
  write_host_slices(out.initOutputs(static_cast<unsigned>(call.outputs.size())), call.outputs);
  write_words(out.initInputBatchEnds(static_cast<unsigned>(call.input_batch_ends.size())), call.input_batch_ends);
  write_words(out.initOutputBatchEnds(static_cast<unsigned>(call.output_batch_ends.size())), call.output_batch_ends);
  write_names(out.initInputBindings(static_cast<unsigned>(call.input_bindings.size())), call.input_bindings);
  write_names(out.initOutputBindings(static_cast<unsigned>(call.output_bindings.size())), call.output_bindings);
}

void write_host_session(s::HostSession::Builder out, const HostSession& host) {
  out.setArenaBytes(host.arena_bytes);
  out.setCommandAddress(host.command_address);
  auto calls = out.initCalls(static_cast<unsigned>(host.calls.size()));
  for (unsigned i = 0; i < host.calls.size(); ++i) write_host_call(calls[i], host.calls[i]);
}

kj::ArrayPtr<const kj::byte> data_of(std::span<const uint8_t> bytes) {
  return kj::arrayPtr(bytes.data(), bytes.size());
}

void write_package(s::Package::Builder out, const Package& package) {
  out.setVersion(package.version);
  out.setMachineName(package.machine_name);
  out.setMachineDigest(package.machine_digest);
  auto phases = out.initPhases(static_cast<unsigned>(package.phases.size()));
  for (unsigned i = 0; i < package.phases.size(); ++i) {
    const Phase& p = package.phases[i];
    phases[i].setId(p.id);
    phases[i].setLabel(p.label);
    phases[i].setExecutionCount(p.execution_count);
    phases[i].setOperation(p.operation);
  }
  auto tiles = out.initTiles(static_cast<unsigned>(package.tiles.size()));
  for (unsigned i = 0; i < package.tiles.size(); ++i) {
    const TileProgram& t = package.tiles[i];
    tiles[i].setTile(t.tile);
    auto segments = tiles[i].initSegments(static_cast<unsigned>(t.segments.size()));
    for (unsigned j = 0; j < t.segments.size(); ++j) {
      const Segment& seg = t.segments[j];
      segments[j].setAddress(seg.address);
      segments[j].setSize(seg.size);
      switch (seg.fill) {
        case FillKind::Bytes:
          segments[j].getFill().setBytes(data_of(seg.bytes));
          break;
        case FillKind::Zero:
          segments[j].getFill().setZero();
          break;
        case FillKind::Tokens:
          segments[j].getFill().setTokens(seg.token_seed);
          break;
      }
    }
    auto table = tiles[i].initTable();
    table.setAddress(t.table.address);
    table.setSize(t.table.size);
    write_steps(tiles[i].initSteps(static_cast<unsigned>(t.steps.size())), t.steps);
  }
  auto bindings = out.initBindings(static_cast<unsigned>(package.bindings.size()));
  for (unsigned i = 0; i < package.bindings.size(); ++i) {
    const Binding& b = package.bindings[i];
    bindings[i].setName(b.name);
    bindings[i].setKind(static_cast<s::BindingKind>(b.kind));
    bindings[i].setElement(static_cast<s::ElementType>(b.element));
    auto shape = bindings[i].initShape(static_cast<unsigned>(b.shape.size()));
    for (unsigned d = 0; d < b.shape.size(); ++d) shape.set(d, b.shape[d]);
    auto slices = bindings[i].initSlices(static_cast<unsigned>(b.slices.size()));
    for (unsigned j = 0; j < b.slices.size(); ++j) {
      slices[j].setTile(b.slices[j].tile);
      slices[j].setAddress(b.slices[j].address);
      slices[j].setBytes(b.slices[j].bytes);
    }
  }
  auto expectations = out.initExpectations(static_cast<unsigned>(package.expectations.size()));
  for (unsigned i = 0; i < package.expectations.size(); ++i) {
    const Expectation& e = package.expectations[i];
    expectations[i].setTile(e.tile);
    expectations[i].setAddress(e.address);
    expectations[i].setSize(e.size);
    expectations[i].setBytes(data_of(e.bytes));
    expectations[i].setHasDigest(e.digest.has_value());
    expectations[i].setDigest(e.digest.value_or(0));
  }
  if (!package.workload.empty()) out.setWorkload(package.workload);
  if (package.host != HostSession{}) write_host_session(out.initHost(), package.host);
}

// ---- reading -------------------------------------------------------------------------

// Recursion guard: Repeat bodies nest; capnp's own nesting limit (64) also bounds this.
constexpr int kMaxRepeatDepth = 32;

struct Reader {
  const std::string& name;
  std::shared_ptr<const void> keeper;  // non-null: Bytes segments view the message

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(name + ": " + where + ": " + what);
  }

  // Text must be well-formed UTF-8: names and labels end up in JSON and HTML.
  std::string text(capnp::Text::Reader t, const std::string& field) const {
    std::string out(t.cStr(), t.size());
    if (const auto bad = first_invalid_utf8(out)) {
      fail(field, "invalid UTF-8 at byte " + std::to_string(*bad));
    }
    return out;
  }

  // The vector's pages mapped in one call before the copy fills them.
  std::vector<uint8_t> data(capnp::Data::Reader d) const {
    std::vector<uint8_t> out;
    reserve_populated(out, d.size());
    out.assign(d.begin(), d.end());
    return out;
  }

  // `tile` is "tile N", `path` the index path of the enclosing Repeat ("" at top level).
  std::vector<Step> steps(capnp::List<s::Step>::Reader in, const std::string& tile, const std::string& path,
                          int depth) const {
    if (depth > kMaxRepeatDepth) {
      fail(tile + ": step " + path, "Repeat bodies nested deeper than " + std::to_string(kMaxRepeatDepth));
    }
    std::vector<Step> out;
    unsigned index = 0;
    for (auto step : in) {
      const std::string at = path.empty() ? std::to_string(index) : path + "." + std::to_string(index);
      ++index;
      out.push_back(this->step(step, tile, at, depth));
    }
    return out;
  }

  Step step(s::Step::Reader in, const std::string& tile, const std::string& path, int depth) const {
    const std::string where = tile + ": step " + path;
    switch (in.which()) {
      case s::Step::SYNC:
        return Step{SyncStep{in.getSync()}};
      case s::Step::EXCHANGE: {
        auto e = in.getExchange();
        ExchangeStep out;
        out.phase = e.getPhase();
        if (e.getHasRowAddress()) out.row_address = e.getRowAddress();
        out.incoming_base = e.getIncomingBase();
        if (e.getHasIncomingMux()) out.incoming_mux = e.getIncomingMux();
        out.incoming_format = e.getIncomingFormat();
        if (e.getHasIncomingMuxpair()) out.incoming_muxpair = e.getIncomingMuxpair();
        return Step{out};
      }
      case s::Step::KERNEL: {
        auto k = in.getKernel();
        KernelStep out;
        out.name = text(k.getName(), where + " (kernel): name");
        for (auto o : k.getOperands()) out.operands.push_back({o.getAddress(), o.getIndirect(), o.getOffset()});
        for (int64_t v : k.getScalars()) out.scalars.push_back(v);
        return Step{out};
      }
      case s::Step::REPEAT: {
        auto r = in.getRepeat();
        RepeatStep out;
        out.count = r.getCount();
        out.body = steps(r.getBody(), tile, path, depth + 1);
        for (auto p : r.getPointers()) out.pointers.push_back({p.getAddress(), p.getStride()});
        return Step{out};
      }
      case s::Step::PATCH: {
        auto p = in.getPatch();
        PatchStep out;
        const auto method = static_cast<uint16_t>(p.getMethod());
        if (method > static_cast<uint16_t>(PatchMethod::Setup)) {
          fail(where + " (patch)", "method: " + std::to_string(method) + " unknown");
        }
        out.method = static_cast<PatchMethod>(method);
        for (auto entry : p.getEntries()) {
          PatchEntry e;
          e.word_address = entry.getWordAddress();
          for (uint32_t v : entry.getValues()) e.values.push_back(v);
          out.entries.push_back(std::move(e));
        }
        return Step{out};
      }
      case s::Step::HOST:
        return Step{host_step(in.getHost(), where + " (host)")};
    }
    fail(where, "unknown step kind " + std::to_string(static_cast<unsigned>(in.which())));
  }

  HostStep host_step(s::HostStep::Reader in, const std::string& where) const {
    HostStep out;
    unsigned index = 0;
    for (auto t : in.getTransfers()) {
      const auto direction = static_cast<uint16_t>(t.getDirection());
      if (direction > static_cast<uint16_t>(HostDirection::ToHost)) {
        fail(where, "transfers[" + std::to_string(index) + "].direction: " + std::to_string(direction) + " unknown");
      }
      out.transfers.push_back(
          {static_cast<HostDirection>(direction), t.getTileAddress(), t.getHostAddress(), t.getBytes()});
      ++index;
    }
    return out;
  }

  std::vector<HostFileSlice> host_slices(capnp::List<s::HostFileSlice>::Reader in) const {
    std::vector<HostFileSlice> out;
    for (auto slice : in) {
      out.push_back({slice.getHostAddress(), slice.getFileOffset(), slice.getBytes()});
    }
    return out;
  }

  std::vector<std::string> names(capnp::List<capnp::Text>::Reader in, const std::string& field) const {
    std::vector<std::string> out;
    for (auto t : in) out.push_back(text(t, field + "[" + std::to_string(out.size()) + "]"));
    return out;
  }

  HostCallSpec host_call(s::HostCallSpec::Reader in, const std::string& where) const {
    HostCallSpec out;
    out.name = text(in.getName(), where + ": name");
    out.command = in.getCommand();
    out.phases = in.getPhases();
    out.inputs = host_slices(in.getInputs());
    out.outputs = host_slices(in.getOutputs());
    for (uint32_t end : in.getInputBatchEnds()) out.input_batch_ends.push_back(end);
    for (uint32_t end : in.getOutputBatchEnds()) out.output_batch_ends.push_back(end);
    out.input_bindings = names(in.getInputBindings(), where + ": input_bindings");
    out.output_bindings = names(in.getOutputBindings(), where + ": output_bindings");
    return out;
  }

  HostSession host_session(s::HostSession::Reader in) const {
    HostSession out;
    out.arena_bytes = in.getArenaBytes();
    out.command_address = in.getCommandAddress();
    for (auto call : in.getCalls()) {
      out.calls.push_back(host_call(call, "host.calls[" + std::to_string(out.calls.size()) + "]"));
    }
    return out;
  }

  // A Bytes segment found while reading, filled after: out.tiles[tile].segments[segment] gets
  // `bytes` (in the message, which outlives the read).
  struct PendingBytes {
    size_t tile, segment;
    capnp::Data::Reader bytes;
  };

  Package package(s::Package::Reader in) const {
    Package out;
    std::vector<PendingBytes> pending;
    out.version = in.getVersion();
    if (out.version != kPackageVersion) {
      fail("version", "package version " + std::to_string(out.version) +
                          " is not supported (this lockstep reads version " + std::to_string(kPackageVersion) + ")");
    }
    out.machine_name = text(in.getMachineName(), "machine.name");
    out.machine_digest = text(in.getMachineDigest(), "machine.digest");
    for (auto p : in.getPhases()) {
      const std::string phase = "phase " + std::to_string(p.getId());
      out.phases.push_back({p.getId(), text(p.getLabel(), phase + ": label"), p.getExecutionCount(),
                            text(p.getOperation(), phase + ": operation")});
    }
    for (auto t : in.getTiles()) {
      TileProgram tile;
      tile.tile = t.getTile();
      const std::string where = "tile " + std::to_string(tile.tile);
      for (auto seg : t.getSegments()) {
        Segment s;
        s.address = seg.getAddress();
        s.size = seg.getSize();
        auto fill = seg.getFill();
        switch (fill.which()) {
          case s::Segment::Fill::BYTES: {
            s.fill = FillKind::Bytes;
            pending.push_back({out.tiles.size(), tile.segments.size(), fill.getBytes()});
            break;
          }
          case s::Segment::Fill::ZERO:
            s.fill = FillKind::Zero;
            break;
          case s::Segment::Fill::TOKENS:
            s.fill = FillKind::Tokens;
            s.token_seed = fill.getTokens();
            break;
          default:
            fail(where, "segment fill kind " + std::to_string(static_cast<unsigned>(fill.which())) + " unknown");
        }
        tile.segments.push_back(std::move(s));
      }
      auto table = t.getTable();
      tile.table = {table.getAddress(), table.getSize()};
      tile.steps = steps(t.getSteps(), where, "", 0);
      out.tiles.push_back(std::move(tile));
    }
    for (auto b : in.getBindings()) {
      Binding binding;
      binding.name = text(b.getName(), "binding name");
      const auto kind = static_cast<uint16_t>(b.getKind());
      if (kind > static_cast<uint16_t>(BindingKind::Weight)) {
        fail("binding '" + binding.name + "'", "kind " + std::to_string(kind) + " unknown");
      }
      binding.kind = static_cast<BindingKind>(kind);
      const auto element = static_cast<uint16_t>(b.getElement());
      if (element > static_cast<uint16_t>(ElementType::Float32)) {
        fail("binding '" + binding.name + "'", "element type " + std::to_string(element) + " unknown");
      }
      binding.element = static_cast<ElementType>(element);
      for (uint32_t d : b.getShape()) binding.shape.push_back(d);
      for (auto slice : b.getSlices()) {
        binding.slices.push_back({slice.getTile(), slice.getAddress(), slice.getBytes()});
      }
      out.bindings.push_back(std::move(binding));
    }
    for (auto e : in.getExpectations()) {
      Expectation exp;
      exp.tile = e.getTile();
      exp.address = e.getAddress();
      exp.size = e.getSize();
      exp.bytes = data(e.getBytes());
      if (e.getHasDigest()) exp.digest = e.getDigest();
      out.expectations.push_back(std::move(exp));
    }
    out.workload = text(in.getWorkload(), "workload");
    if (in.hasHost()) out.host = host_session(in.getHost());
    fill_segments(out, pending);
    return out;
  }

  // The segments' bytes (a model's are 460 MB), once the whole package has been read and
  // checked: views of the message when it is kept alive; otherwise copies, made on every
  // core, as each copy's destination is fresh memory whose first touches (113,000 of them)
  // cost more than the copy.
  void fill_segments(Package& out, const std::vector<PendingBytes>& pending) const {
    if (keeper != nullptr) {
      for (const PendingBytes& p : pending) {
        out.tiles[p.tile].segments[p.segment].bytes =
            SegmentBytes::view(keeper, std::span<const uint8_t>(p.bytes.begin(), p.bytes.size()));
      }
      return;
    }
    parallel_for_each(size_t{0}, pending.size(), [&](size_t i) {
      const PendingBytes& p = pending[i];
      out.tiles[p.tile].segments[p.segment].bytes = data(p.bytes);
    });
  }
};

}  // namespace

std::string package_to_capnp_bytes(const Package& package) {
  capnp::MallocMessageBuilder builder;
  write_package(builder.initRoot<s::Package>(), package);
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(builder);
  const auto bytes = words.asBytes();
  std::string out(kPackageMagic, kPackageMagicBytes);
  out.append(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  return out;
}

Package parse_package_capnp(const uint8_t* data, size_t size, const std::string& name,
                            std::shared_ptr<const void> keeper) {
  if (size < kPackageMagicBytes || std::memcmp(data, kPackageMagic, kPackageMagicBytes) != 0) {
    throw InputError(name + ": not a Cap'n Proto package (missing the LKSPKG01 magic)");
  }
  const uint8_t* body = data + kPackageMagicBytes;
  const size_t body_size = size - kPackageMagicBytes;
  kj::Array<capnp::word> copy;
  const kj::ArrayPtr<const capnp::word> words = capnp_message_words(body, body_size, copy, name, "package");
  const size_t word_count = words.size();
  capnp::ReaderOptions options;
  // Bounded by the file's size so a hostile file cannot make us read (or allocate) far
  // more than it holds, yet generous enough that an honest reader never hits it.
  options.traversalLimitInWords = 8 * word_count + 8192;
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    if (reader.getEnd() != words.end()) {
      throw InputError(name + ": corrupt package: " + std::to_string(words.end() - reader.getEnd()) +
                       " words after the message");
    }
    // Views only of the caller's own bytes: an unaligned message was read from `copy`.
    if (copy.size() != 0) keeper = nullptr;
    return Reader{name, std::move(keeper)}.package(reader.getRoot<s::Package>());
  } catch (const kj::Exception& e) {
    std::string what(e.getDescription().cStr());
    for (char& c : what) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    throw InputError(name + ": corrupt package: " + what);
  }
}

void write_package_capnp(const Package& package, const std::string& path) {
  // Straight from the builder's segments to the file, the same bytes as
  // package_to_capnp_bytes: its flat copy and string copy of a whole model (500 MB of
  // segments) cost more than the rest of writing.
  capnp::MallocMessageBuilder builder;
  write_package(builder.initRoot<s::Package>(), package);
  write_capnp_file(path, builder, std::string_view(kPackageMagic, kPackageMagicBytes));
}

}  // namespace lockstep::arch
