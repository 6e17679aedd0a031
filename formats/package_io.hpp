#pragma once
// Lower-level entry points of the package formats (formats/package.hpp has the usual ones):
// reading from memory (the fuzzer, tests) and producing the on-disk bytes without a file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "formats/package.hpp"

namespace lockstep::arch {

// The first 8 bytes of a Cap'n Proto package file; the flat message follows, word-aligned.
inline constexpr char kPackageMagic[9] = "LKSPKG01";
inline constexpr size_t kPackageMagicBytes = 8;

// Parses a package held in memory, picking the form from the content like read_package.
// `name` stands for the file in error messages. Never crashes on any input: a package or
// an InputError. With a `keeper` that keeps `data` alive, the Bytes segments of a Cap'n
// Proto package are views into `data` that hold the keeper; without, they are copies.
Package read_package_from_bytes(const uint8_t* data, size_t size, const std::string& name,
                                std::shared_ptr<const void> keeper = nullptr);

// The Cap'n Proto form: magic + flat message. Deterministic: the same package always gives
// the same bytes.
std::string package_to_capnp_bytes(const Package& package);
// `data` must start with the magic. Accepts unaligned input (copies it then, and its
// segments are then copies too).
Package parse_package_capnp(const uint8_t* data, size_t size, const std::string& name,
                            std::shared_ptr<const void> keeper = nullptr);

// Names used by both forms and by error messages.
const char* fill_kind_name(FillKind kind);
const char* patch_method_name(PatchMethod method);
const char* binding_kind_name(BindingKind kind);
// "sync", "exchange", "kernel", "repeat", "patch" or "host".
const char* step_kind_name(const Step& step);

}  // namespace lockstep::arch
