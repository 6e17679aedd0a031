// The YAML form of a package (docs/formats.md), read strictly through arch::YamlMap.
#include <cctype>

#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "io/yaml_reader.hpp"

namespace lockstep::arch {

namespace {

constexpr int kMaxRepeatDepth = 32;  // same bound as the Cap'n Proto reader

std::string item_path(const std::string& list_path, size_t index) {
  return list_path + "[" + std::to_string(index) + "]";
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Row words are always hexadecimal, with or without 0x: "41800003" is 0x41800003.
uint32_t hex_word(const YAML::Node& node, const std::string& file, const std::string& path) {
  if (!node.IsScalar()) yaml_fail(file, node, path, "expected a hexadecimal 32-bit word");
  std::string text = node.Scalar();
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text = text.substr(2);
  if (text.empty() || text.size() > 8) {
    yaml_fail(file, node, path, "expected a hexadecimal 32-bit word (1 to 8 hex digits), got '" + node.Scalar() + "'");
  }
  uint32_t value = 0;
  for (char c : text) {
    const int d = hex_digit(c);
    if (d < 0) {
      yaml_fail(file, node, path, "expected a hexadecimal 32-bit word, got '" + node.Scalar() + "'");
    }
    value = value << 4 | static_cast<uint32_t>(d);
  }
  return value;
}

std::vector<uint8_t> hex_bytes(const YAML::Node& node, const std::string& file, const std::string& path) {
  const std::string text = yaml_string(node, file, path);
  if (text.size() % 2 != 0) {
    yaml_fail(file, node, path, "hex byte string has an odd number of digits (" + std::to_string(text.size()) + ")");
  }
  std::vector<uint8_t> bytes(text.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      yaml_fail(file, node, path, "not a hex digit at position " + std::to_string(2 * i));
    }
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return bytes;
}

std::vector<uint32_t> word_list(YamlMap& map, const std::string& key) {
  const std::string path = map.key_path(key);
  std::vector<uint32_t> words;
  const auto items = map.list(key);
  for (size_t i = 0; i < items.size(); ++i) {
    words.push_back(hex_word(items[i], map.file(), item_path(path, i)));
  }
  return words;
}

std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes;
  bytes.reserve(words.size() * 4);
  for (uint32_t w : words) {
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
  }
  return bytes;
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  Package package(const YAML::Node& root) {
    YamlMap top(root, file_, "");
    Package out;
    out.version = top.required_unsigned<uint32_t>("version");
    if (out.version != kPackageVersion) {
      yaml_fail(file_, top.node()["version"], "version",
                "package version " + std::to_string(out.version) + " is not supported (this lockstep reads version " +
                    std::to_string(kPackageVersion) + ")");
    }
    YamlMap machine = top.map("machine");
    out.machine_name = machine.string("name");
    out.machine_digest = machine.optional_string("digest", "");
    machine.finish();
    out.workload = top.optional_string("workload", "");
    for_each(top, "phases", [&](YamlMap& m) { out.phases.push_back(phase(m)); });
    for_each(top, "tiles", [&](YamlMap& m) { out.tiles.push_back(tile(m)); });
    for_each(top, "bindings", [&](YamlMap& m) { out.bindings.push_back(binding(m)); });
    for_each(top, "expectations", [&](YamlMap& m) { out.expectations.push_back(expectation(m)); });
    if (auto host = top.optional_map("host")) {
      out.host = host_session(*host);
      host->finish();
    }
    top.finish();
    return out;
  }

 private:
  template <typename F>
  void for_each(YamlMap& parent, const std::string& key, F&& each) {
    if (!parent.has(key)) return;
    const std::string path = parent.key_path(key);
    const auto items = parent.list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      YamlMap m(items[i], file_, item_path(path, i));
      each(m);
      m.finish();
    }
  }

  Phase phase(YamlMap& m) {
    Phase p;
    p.id = m.required_unsigned<uint32_t>("id");
    p.label = m.optional_string("label", "");
    p.execution_count = m.optional_unsigned<uint32_t>("execution_count", 1);
    p.operation = m.optional_string("operation", "");
    return p;
  }

  TileProgram tile(YamlMap& m) {
    TileProgram t;
    t.tile = m.required_unsigned<uint32_t>("tile");
    if (auto table = m.optional_map("table")) {
      t.table.address = table->required_unsigned<uint32_t>("address");
      t.table.size = table->required_unsigned<uint32_t>("size");
      table->finish();
    }
    for_each(m, "segments", [&](YamlMap& s) { t.segments.push_back(segment(s)); });
    if (m.has("steps")) t.steps = steps(m, "steps", 0);
    return t;
  }

  Segment segment(YamlMap& m) {
    Segment s;
    s.address = m.required_unsigned<uint32_t>("address");
    const int forms = int(m.has("words")) + int(m.has("bytes")) + int(m.has("fill"));
    if (forms != 1) {
      yaml_fail(file_, m.node(), m.key_path("words"), "a segment has exactly one of words, bytes or fill");
    }
    if (m.has("fill")) {
      s.size = m.required_unsigned<uint32_t>("size");
      const YAML::Node fill = m.node()["fill"];
      if (fill.IsScalar() && fill.Scalar() == "zero") {
        m.string("fill");
        s.fill = FillKind::Zero;
      } else if (fill.IsMap()) {
        YamlMap f = m.map("fill");
        s.fill = FillKind::Tokens;
        s.token_seed = f.unsigned_value("tokens", UINT64_MAX);
        f.finish();
      } else {
        yaml_fail(file_, fill, m.key_path("fill"), "expected 'zero' or {tokens: SEED}");
      }
      return s;
    }
    s.fill = FillKind::Bytes;
    const std::string key = m.has("words") ? "words" : "bytes";
    s.bytes = key == "words" ? words_to_bytes(word_list(m, key)) : hex_bytes(m.node()[key], file_, m.key_path(key));
    if (key == "bytes") m.string(key);  // marks the key as read
    if (s.bytes.size() > UINT32_MAX) yaml_fail(file_, m.node(), m.key_path(key), "too large");
    s.size = static_cast<uint32_t>(s.bytes.size());
    if (m.has("size")) {
      const uint32_t size = m.required_unsigned<uint32_t>("size");
      if (size != s.size) {
        yaml_fail(file_, m.node()["size"], m.key_path("size"),
                  "size " + std::to_string(size) + " does not match the " + std::to_string(s.size) + " bytes given");
      }
    }
    return s;
  }

  std::vector<Step> steps(YamlMap& parent, const std::string& key, int depth) {
    const std::string path = parent.key_path(key);
    if (depth > kMaxRepeatDepth) {
      yaml_fail(file_, parent.node(), path, "Repeat bodies nested deeper than " + std::to_string(kMaxRepeatDepth));
    }
    std::vector<Step> out;
    const auto items = parent.list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      out.push_back(step(items[i], item_path(path, i), depth));
    }
    return out;
  }

  Step step(const YAML::Node& node, const std::string& path, int depth) {
    if (!node.IsMap() || node.size() != 1) {
      yaml_fail(file_, node, path, "a step is a mapping with one key: sync, exchange, kernel, repeat, patch or host");
    }
    const YAML::Node key_node = node.begin()->first;
    const std::string kind = yaml_string(key_node, file_, path);
    YamlMap wrapper(node, file_, path);
    if (kind == "sync") {
      return Step{SyncStep{wrapper.required_unsigned<uint32_t>("sync")}};
    }
    if (kind != "exchange" && kind != "kernel" && kind != "repeat" && kind != "patch" && kind != "host") {
      yaml_fail(file_, key_node, wrapper.key_path(kind),
                "unknown step kind (expected sync, exchange, kernel, repeat, patch or host)");
    }
    YamlMap m = wrapper.map(kind);
    Step out;
    if (kind == "exchange") {
      ExchangeStep e;
      e.phase = m.required_unsigned<uint32_t>("phase");
      if (m.has("row")) e.row_address = m.required_unsigned<uint32_t>("row");
      e.incoming_base = m.optional_unsigned<uint32_t>("incoming_base", 0);
      if (m.has("incoming_mux")) e.incoming_mux = m.required_unsigned<uint32_t>("incoming_mux");
      e.incoming_format = m.optional_unsigned<uint32_t>("incoming_format", 0);
      if (m.has("incoming_muxpair")) e.incoming_muxpair = m.required_unsigned<uint32_t>("incoming_muxpair");
      out.kind = e;
    } else if (kind == "kernel") {
      KernelStep k;
      k.name = m.string("name");
      if (m.has("operands")) {
        const auto items = m.list("operands");
        for (size_t i = 0; i < items.size(); ++i)
          k.operands.push_back(operand(items[i], item_path(m.key_path("operands"), i)));
      }
      if (m.has("scalars")) {
        const auto items = m.list("scalars");
        for (size_t i = 0; i < items.size(); ++i) {
          k.scalars.push_back(yaml_signed(items[i], file_, item_path(m.key_path("scalars"), i), INT64_MIN, INT64_MAX));
        }
      }
      out.kind = k;
    } else if (kind == "repeat") {
      RepeatStep r;
      r.count = m.required_unsigned<uint32_t>("count");
      for_each(m, "pointers", [&](YamlMap& p) {
        IteratedPointer ptr;
        ptr.address = p.required_unsigned<uint32_t>("address");
        ptr.stride = static_cast<int32_t>(p.signed_value("stride", INT32_MIN, INT32_MAX));
        r.pointers.push_back(ptr);
      });
      r.body = steps(m, "body", depth + 1);
      out.kind = std::move(r);
    } else if (kind == "host") {
      out.kind = host_step(m);
    } else {
      PatchStep p;
      const std::string method = m.string("method");
      if (method == "helper") {
        p.method = PatchMethod::Helper;
      } else if (method == "bulk") {
        p.method = PatchMethod::Bulk;
      } else if (method == "setup") {
        p.method = PatchMethod::Setup;
      } else {
        yaml_fail(file_, m.node()["method"], m.key_path("method"),
                  "unknown patch method '" + method + "' (expected helper, bulk or setup)");
      }
      for_each(m, "entries", [&](YamlMap& e) {
        PatchEntry entry;
        entry.word_address = e.required_unsigned<uint32_t>("word");
        entry.values = word_list(e, "values");
        p.entries.push_back(std::move(entry));
      });
      out.kind = std::move(p);
    }
    m.finish();
    wrapper.finish();
    return out;
  }

  HostStep host_step(YamlMap& m) {
    HostStep h;
    for_each(m, "transfers", [&](YamlMap& t) {
      HostTransfer transfer;
      const std::string to = t.string("to");
      if (to == "tile") {
        transfer.direction = HostDirection::ToTile;
      } else if (to == "host") {
        transfer.direction = HostDirection::ToHost;
      } else {
        yaml_fail(file_, t.node()["to"], t.key_path("to"), "unknown direction '" + to + "' (expected tile or host)");
      }
      transfer.tile_address = t.required_unsigned<uint32_t>("tile_address");
      transfer.host_address = t.required_unsigned<uint32_t>("host_address");
      transfer.bytes = t.required_unsigned<uint32_t>("bytes");
      h.transfers.push_back(transfer);
    });
    return h;
  }

  HostSession host_session(YamlMap& m) {
    HostSession h;
    h.arena_bytes = m.required_unsigned<uint32_t>("arena_bytes");
    h.command_address = m.optional_unsigned<uint32_t>("command_address", 0);
    for_each(m, "calls", [&](YamlMap& c) { h.calls.push_back(host_call(c)); });
    return h;
  }

  HostCallSpec host_call(YamlMap& m) {
    HostCallSpec c;
    c.name = m.string("name");
    c.command = m.optional_unsigned<uint32_t>("command", 0);
    c.phases = m.optional_unsigned<uint32_t>("phases", 0);
    c.inputs = host_slices(m, "inputs");
    c.outputs = host_slices(m, "outputs");
    c.input_batch_ends = count_list(m, "input_batch_ends");
    c.output_batch_ends = count_list(m, "output_batch_ends");
    c.input_bindings = name_list(m, "input_bindings");
    c.output_bindings = name_list(m, "output_bindings");
    return c;
  }

  std::vector<HostFileSlice> host_slices(YamlMap& m, const std::string& key) {
    std::vector<HostFileSlice> out;
    for_each(m, key, [&](YamlMap& s) {
      HostFileSlice slice;
      slice.host_address = s.required_unsigned<uint32_t>("host_address");
      slice.file_offset = s.unsigned_value("file_offset", UINT64_MAX);
      slice.bytes = s.required_unsigned<uint32_t>("bytes");
      out.push_back(slice);
    });
    return out;
  }

  std::vector<uint32_t> count_list(YamlMap& m, const std::string& key) {
    std::vector<uint32_t> out;
    if (!m.has(key)) return out;
    const auto items = m.list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      out.push_back(static_cast<uint32_t>(yaml_unsigned(items[i], file_, item_path(m.key_path(key), i), UINT32_MAX)));
    }
    return out;
  }

  std::vector<std::string> name_list(YamlMap& m, const std::string& key) {
    std::vector<std::string> out;
    if (!m.has(key)) return out;
    const auto items = m.list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      out.push_back(yaml_string(items[i], file_, item_path(m.key_path(key), i)));
    }
    return out;
  }

  Operand operand(const YAML::Node& node, const std::string& path) {
    if (node.IsMap()) {
      YamlMap m(node, file_, path);
      Operand o{m.required_unsigned<uint32_t>("pointer"), true};
      if (m.has("offset")) o.offset = static_cast<int32_t>(m.signed_value("offset", INT32_MIN, INT32_MAX));
      m.finish();
      return o;
    }
    return Operand{static_cast<uint32_t>(yaml_unsigned(node, file_, path, UINT32_MAX)), false};
  }

  Binding binding(YamlMap& m) {
    Binding b;
    b.name = m.string("name");
    const std::string kind = m.string("kind");
    if (kind == "input") {
      b.kind = BindingKind::Input;
    } else if (kind == "output") {
      b.kind = BindingKind::Output;
    } else if (kind == "weight") {
      b.kind = BindingKind::Weight;
    } else {
      yaml_fail(file_, m.node()["kind"], m.key_path("kind"),
                "unknown binding kind '" + kind + "' (expected input, output or weight)");
    }
    if (m.has("element")) {
      const std::string element = m.string("element");
      if (element == "float16") {
        b.element = ElementType::Float16;
      } else if (element == "float32") {
        b.element = ElementType::Float32;
      } else if (element != "bytes") {
        yaml_fail(file_, m.node()["element"], m.key_path("element"),
                  "unknown element type '" + element + "' (expected bytes, float16 or float32)");
      }
    }
    if (m.has("shape")) {
      const auto dims = m.list("shape");
      for (size_t i = 0; i < dims.size(); ++i) {
        b.shape.push_back(
            static_cast<uint32_t>(yaml_unsigned(dims[i], file_, item_path(m.key_path("shape"), i), UINT32_MAX)));
      }
    }
    for_each(m, "slices", [&](YamlMap& s) {
      Slice slice;
      slice.tile = s.required_unsigned<uint32_t>("tile");
      slice.address = s.required_unsigned<uint32_t>("address");
      slice.bytes = s.required_unsigned<uint32_t>("bytes");
      b.slices.push_back(slice);
    });
    return b;
  }

  Expectation expectation(YamlMap& m) {
    Expectation e;
    e.tile = m.required_unsigned<uint32_t>("tile");
    e.address = m.required_unsigned<uint32_t>("address");
    if (m.has("bytes") == m.has("digest")) {
      yaml_fail(file_, m.node(), m.key_path("bytes"), "an expectation has exactly one of bytes or digest");
    }
    if (m.has("digest")) {
      e.digest = m.unsigned_value("digest", UINT64_MAX);
      e.size = m.required_unsigned<uint32_t>("size");
      return e;
    }
    e.bytes = hex_bytes(m.node()["bytes"], file_, m.key_path("bytes"));
    m.string("bytes");
    if (e.bytes.size() > UINT32_MAX) yaml_fail(file_, m.node(), m.key_path("bytes"), "too large");
    e.size = static_cast<uint32_t>(e.bytes.size());
    if (m.has("size") && m.required_unsigned<uint32_t>("size") != e.size) {
      yaml_fail(file_, m.node()["size"], m.key_path("size"),
                "size does not match the " + std::to_string(e.size) + " bytes given");
    }
    return e;
  }

  std::string file_;
};

}  // namespace

Package parse_package_yaml(const std::string& text, const std::string& file_name) {
  const YAML::Node root = parse_yaml_text(text, file_name);
  try {
    return Parser(file_name).package(root);
  } catch (const YAML::Exception& e) {
    // Node conversions inside yaml-cpp; keep the one-line "file:line: what" form.
    throw InputError(file_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace lockstep::arch
