// --input and --output files of a package's bindings (moved from run_command.cpp).
#include "cli/binding_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "formats/token.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::cli {

// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace binding_files_local {}
using namespace binding_files_local;
namespace binding_files_local {

std::vector<uint8_t> read_binary(const std::string& path, const std::string& what) {
  try {
    const std::string bytes = arch::read_regular_file(path);  // refuses devices and FIFOs
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  } catch (const InputError& e) {
    throw InputError(what + ": " + e.what());
  }
}

}  // namespace binding_files_local

bool is_npy(const std::string& path) { return path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0; }

// The binding a NAME=FILE or a bare FILE names: a bare file needs exactly one of that kind.
const arch::Binding& binding_for(const arch::Package& package, const std::string& spec, arch::BindingKind kind,
                                 const char* option, std::string& file) {
  const auto eq = spec.find('=');
  const std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
  file = eq == std::string::npos ? spec : spec.substr(eq + 1);
  const arch::Binding* found = nullptr;
  size_t count = 0;
  for (const auto& b : package.bindings) {
    if (b.kind != kind) {
      // A weight binding given by name is an input too (an imported image's `initialize` data).
      if (kind == arch::BindingKind::Input && b.kind == arch::BindingKind::Weight && !name.empty() && b.name == name)
        found = &b;
      continue;
    }
    ++count;
    if (name.empty() || b.name == name) found = &b;
  }
  const char* what = kind == arch::BindingKind::Output ? "output" : "input";
  if (name.empty() && count != 1) {
    throw InputError(std::string(option) + " " + spec + ": the package has " + std::to_string(count) + " " + what +
                     " bindings; say which with NAME=FILE");
  }
  if (found == nullptr) throw InputError(std::string(option) + " " + spec + ": no " + what + " binding '" + name + "'");
  return *found;
}

std::vector<std::pair<const arch::Binding*, std::string>> bindings_for(const arch::Package& package,
                                                                       const std::vector<std::string>& specs,
                                                                       arch::BindingKind kind, const char* option) {
  std::vector<std::pair<const arch::Binding*, std::string>> bound;
  std::map<std::string, std::string> given;  // binding name -> the spec that named it
  for (const std::string& spec : specs) {
    std::string file;
    const arch::Binding& b = binding_for(package, spec, kind, option, file);
    const auto [first, fresh] = given.emplace(b.name, spec);
    if (!fresh) {
      const char* what = kind == arch::BindingKind::Output ? "output" : "input";
      throw InputError(std::string(option) + " " + spec + ": " + what + " '" + b.name + "' is already given by " +
                       option + " " + first->second);
    }
    bound.emplace_back(&b, file);
  }
  return bound;
}

arch::NpyType npy_type(const arch::Binding& b, const std::string& file) {
  if (b.element == arch::ElementType::Float16) return arch::NpyType::kFloat16;
  if (b.element == arch::ElementType::Float32) return arch::NpyType::kFloat32;
  throw InputError(file + ": binding '" + b.name + "' has no element type, so it has no .npy form (use a .bin file)");
}

std::vector<uint64_t> npy_shape(const arch::Binding& b) { return {b.shape.begin(), b.shape.end()}; }

// An input's bytes: a .npy array of the binding's element type and shape, or raw bytes.
namespace binding_files_local {

// The first NaN or infinity of a float16 or float32 array, as "element I is nan"; "" if none.
std::string first_non_finite(const arch::NpyArray& array) {
  const bool half = array.type == arch::NpyType::kFloat16;
  if (!half && array.type != arch::NpyType::kFloat32) return "";
  const size_t width = half ? 2 : 4;
  for (size_t i = 0; i + width <= array.data.size(); i += width) {
    double value = 0;
    if (half) {
      uint16_t bits;
      std::memcpy(&bits, array.data.data() + i, 2);
      value = arch::fp16_to_float(bits);
    } else {
      float f;
      std::memcpy(&f, array.data.data() + i, 4);
      value = f;
    }
    if (!std::isfinite(value))
      return "element " + std::to_string(i / width) + " is " + (std::isnan(value) ? "nan" : "inf");
  }
  return "";
}

}  // namespace binding_files_local

std::vector<uint8_t> read_input(const arch::Binding& b, const std::string& file, bool allow_non_finite) {
  if (!is_npy(file)) return read_binary(file, "--input " + b.name);
  arch::NpyArray array = arch::read_npy(file);
  arch::expect_npy(array, file, npy_type(b, file), npy_shape(b));
  if (!allow_non_finite) {
    if (const std::string bad = first_non_finite(array); !bad.empty()) {
      throw InputError(file + ": --input " + b.name + ": " + bad +
                       ", which poisons every output (--allow-non-finite keeps it)");
    }
  }
  return std::move(array.data);
}

std::vector<uint8_t> package_binding_bytes(const arch::Package& package, const arch::Binding& b) {
  std::vector<uint8_t> out;
  for (const arch::Slice& slice : b.slices) {
    const size_t at = out.size();
    out.resize(at + slice.bytes, 0);
    for (const arch::TileProgram& t : package.tiles) {
      if (t.tile != slice.tile) continue;
      for (const arch::Segment& seg : t.segments) {
        const uint64_t lo = std::max<uint64_t>(seg.address, slice.address);
        const uint64_t hi = std::min<uint64_t>(uint64_t{seg.address} + seg.size, uint64_t{slice.address} + slice.bytes);
        for (uint64_t a = lo; a < hi; ++a) {
          uint8_t byte = 0;
          if (seg.fill == arch::FillKind::Bytes) {
            byte = seg.bytes[a - seg.address];
          } else if (seg.fill == arch::FillKind::Tokens) {
            const uint32_t word = arch::payload_token(seg.token_seed, t.tile, static_cast<uint32_t>(a & ~uint64_t{3}));
            byte = static_cast<uint8_t>(word >> (8 * (a & 3)));
          }
          out[at + (a - slice.address)] = byte;
        }
      }
    }
  }
  return out;
}

}  // namespace lockstep::cli
