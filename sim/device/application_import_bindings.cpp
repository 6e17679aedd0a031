// An image's bindings as package bindings (docs/device.md "Import"). The stack checks no
// binding's dtype or shape against its slices (IPU21-DEVICE.md 17.4); the import refuses
// what a package cannot represent: a shape that does not hold the binding's bytes, and slices
// that do not lie back to back in the binding's file (a package binding is its slices
// concatenated).
#include <algorithm>
#include <limits>

#include "io/errors.hpp"
#include "io/printable.hpp"
#include "sim/device/application_import.hpp"
#include "sim/device/application_import_parts.hpp"

namespace lockstep::arch {
namespace {

// f16 and f32 keep their type; u8 is the package's untyped bytes; u32 and f8f143, which a
// package cannot type, come as their bytes (untyped_bindings names them).
ElementType element_of(const std::string& dtype) {
  if (dtype == "f16") return ElementType::Float16;
  if (dtype == "f32") return ElementType::Float32;
  return ElementType::Bytes;
}

std::string shape_text(const std::vector<uint32_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i == 8) return out + ", ... (" + std::to_string(shape.size()) + " dimensions)]";
    out += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return out + "]";
}

// The binding's slices in file order; they must fill [0, bytes) back to back.
std::vector<RegionSlice> file_order(const AppBinding& b, const std::string& where) {
  std::vector<RegionSlice> slices = b.slices;
  std::stable_sort(slices.begin(), slices.end(),
                   [](const RegionSlice& x, const RegionSlice& y) { return x.file_offset < y.file_offset; });
  uint64_t next = 0;
  for (const RegionSlice& s : slices) {
    if (s.file_offset != next) {
      throw InputError(where + ": binding '" + printable(b.name) + "': its slices " +
                       (s.file_offset > next ? "leave a gap" : "overlap") + " at file byte " +
                       std::to_string(std::min(next, s.file_offset)) +
                       " (a package binding is its slices back to back)");
    }
    next = s.file_offset + s.size;  // the reader refused an overflow
  }
  return slices;
}

// The shape's element count times the dtype's size must be the binding's bytes.
void check_shape(const AppBinding& b, uint64_t bytes, const std::string& where) {
  const std::string what = where + ": binding '" + printable(b.name) + "': shape " + shape_text(b.shape) + " of ";
  const uint64_t size = dtype_bytes(b.dtype);
  if (size == 0) throw InputError(what + "\"" + printable(b.dtype) + "\": not a dtype");
  uint64_t count = 1;
  for (const uint32_t d : b.shape) {
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d) {
      throw InputError(what + b.dtype + " overflows 64 bits");
    }
    count *= d;
  }
  if (count > std::numeric_limits<uint64_t>::max() / size) {
    throw InputError(what + b.dtype + " overflows 64 bits");
  }
  if (count * size != bytes) {
    throw InputError(what + b.dtype + " is " + std::to_string(count * size) + " bytes, but its slices hold " +
                     std::to_string(bytes));
  }
}

// Calls visit(binding, "FILE: outputs[1]", kind) for every binding, in the image's order.
template <typename Visit>
void each_binding(const Application& app, const std::string& file_name, Visit visit) {
  struct List {
    const char* field;
    const std::vector<AppBinding>* bindings;
    BindingKind kind;
  };
  for (const List& list :
       {List{"inputs", &app.inputs, BindingKind::Input}, List{"outputs", &app.outputs, BindingKind::Output},
        List{"weights", &app.weights, BindingKind::Weight}}) {
    for (size_t i = 0; i < list.bindings->size(); ++i) {
      visit((*list.bindings)[i], file_name + ": " + list.field + "[" + std::to_string(i) + "]", list.kind);
    }
  }
}

}  // namespace

void import_bindings(const Application& app, const Topology& topology, Package& package, const std::string& file_name) {
  each_binding(app, file_name, [&](const AppBinding& b, const std::string& where, BindingKind kind) {
    const std::vector<RegionSlice> slices = file_order(b, where);
    check_shape(b, slices.empty() ? 0 : slices.back().file_offset + slices.back().size, where);
    Binding out;
    out.name = b.name;
    out.kind = kind;
    out.element = element_of(b.dtype);
    if (out.element != ElementType::Bytes) out.shape = b.shape;
    for (const RegionSlice& s : slices) {
      out.slices.push_back({topology.logical(s.tile), s.tile_address, static_cast<uint32_t>(s.size)});
    }
    package.bindings.push_back(std::move(out));
  });
}

std::vector<std::string> untyped_bindings(const Application& app, const std::string& file_name) {
  std::vector<std::string> out;
  each_binding(app, file_name, [&](const AppBinding& b, const std::string& where, BindingKind) {
    if (b.dtype != "u32" && b.dtype != "f8f143") return;
    out.push_back(where + ": binding '" + printable(b.name) + "' (" + b.dtype + " " + shape_text(b.shape) +
                  ") imports as untyped bytes: a package types f16 and f32");
  });
  return out;
}

}  // namespace lockstep::arch
