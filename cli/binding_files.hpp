#pragma once
// --input and --output files of a package's bindings, shared by `run` and `device simulate`:
// which binding a [NAME=]FILE names, and a binding's bytes from a .npy array or raw bytes.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/npy.hpp"
#include "formats/package.hpp"

namespace lockstep::cli {

bool is_npy(const std::string& path);

// The binding a NAME=FILE or a bare FILE names: a bare file needs exactly one of that kind.
// An input NAME=FILE may also name a weight binding.
// Sets `file` to the file part. InputError naming `option` otherwise.
const arch::Binding& binding_for(const arch::Package& package, const std::string& spec, arch::BindingKind kind,
                                 const char* option, std::string& file);

// The bindings of `kind` that a repeatable option's [NAME=]FILE `specs` name, with their
// files, in order. A binding named twice is refused: InputError
// "--input payload=b.npy: input 'payload' is already given by --input a.npy".
std::vector<std::pair<const arch::Binding*, std::string>> bindings_for(const arch::Package& package,
                                                                       const std::vector<std::string>& specs,
                                                                       arch::BindingKind kind, const char* option);

// The .npy element type of a typed binding; InputError for a Bytes binding.
arch::NpyType npy_type(const arch::Binding& b, const std::string& file);
std::vector<uint64_t> npy_shape(const arch::Binding& b);

// An input's bytes: a .npy array of the binding's element type and shape, or raw bytes. A
// float array holding NaN or an infinity is refused (InputError naming the file and the first
// element) unless `allow_non_finite`.
std::vector<uint8_t> read_input(const arch::Binding& b, const std::string& file, bool allow_non_finite = false);

// A binding's bytes as the package loads them (its slices back to back, each read from the
// tile's segments; bytes no segment covers are zero).
std::vector<uint8_t> package_binding_bytes(const arch::Package& package, const arch::Binding& b);

}  // namespace lockstep::cli
