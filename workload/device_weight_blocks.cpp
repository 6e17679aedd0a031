// Device weights as a package's weight blocks see them: one block's bytes written for the
// loader, and every block of a package read back into DeviceWeights (docs/reference.md).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/package.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "io/parallel.hpp"
#include "workload/model_weights.hpp"
#include "workload/weight_layout.hpp"

namespace lockstep::workload {

namespace {

// One tensor copy of DeviceWeights as blocks see it: F143 bytes or FP16 halves, row-major
// [rows, columns].
struct TensorRef {
  const uint8_t* bytes = nullptr;
  const uint16_t* halves = nullptr;
  uint32_t rows = 0, columns = 0;
  const void* data() const { return bytes != nullptr ? static_cast<const void*>(bytes) : halves; }
};

bool ends_with(const std::string& t, const std::string& suffix) {
  return t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TensorRef named_tensor(const DeviceWeights& d, const std::string& t, uint32_t layer) {
  if (ends_with(t, ".weight")) {
    const DeviceGemm& g = device_gemm(d, t.substr(0, t.size() - 7), layer);
    return {g.weight.data(), nullptr, g.in, g.out};
  }
  if (ends_with(t, ".bias")) {
    const DeviceGemm& g = device_gemm(d, t.substr(0, t.size() - 5), layer);
    return {nullptr, g.bias.data(), 1, g.out};
  }
  if (t == "embed.position") {
    const uint32_t rows = d.hidden == 0 ? 0 : static_cast<uint32_t>(d.position.size() / d.hidden);
    return {nullptr, d.position.data(), rows, d.hidden};
  }
  if (t == "final.ln.gamma" || t == "final.ln.beta") {
    const auto& v = t == "final.ln.gamma" ? d.final_gamma : d.final_beta;
    return {nullptr, v.data(), 1, static_cast<uint32_t>(v.size())};
  }
  throw std::invalid_argument("unknown tensor");
}

// The tensor copy `block` covers for copy `layer`. Throws std::invalid_argument for an unknown
// tensor, a format that is not the tensor's, or a block outside the tensor.
TensorRef block_tensor(const DeviceWeights& d, const WeightBlock& block, uint32_t layer) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("weight block " + block.tensor + " on tile " + std::to_string(block.tile) + ": " +
                                what);
  };
  TensorRef t;
  try {
    t = named_tensor(d, block.tensor, layer);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  const WeightFormat format = t.bytes != nullptr ? WeightFormat::F143 : WeightFormat::Fp16;
  if (block.format != format) fail("format is not the tensor's");
  if (block.rows.end > t.rows || block.columns.end > t.columns || block.rows.begin > block.rows.end ||
      block.columns.begin > block.columns.end) {
    fail("block lies outside the tensor [" + std::to_string(t.rows) + ", " + std::to_string(t.columns) + "]");
  }
  return t;
}

}  // namespace

void write_device_block(const DeviceWeights& d, const WeightBlock& block, uint32_t layer, uint8_t* out) {
  const TensorRef t = block_tensor(d, block, layer);
  size_t at = 0;
  for (uint32_t r = block.rows.begin; r < block.rows.end; ++r) {
    for (uint32_t c = block.columns.begin; c < block.columns.end; ++c) {
      const size_t i = size_t{r} * t.columns + c;
      if (t.bytes != nullptr) {
        out[at++] = t.bytes[i];
      } else {
        out[at++] = static_cast<uint8_t>(t.halves[i] & 0xff);
        out[at++] = static_cast<uint8_t>(t.halves[i] >> 8);
      }
    }
  }
}

namespace {

// DeviceWeights of w's shapes, every value zero. The layers' weights (410 MB for
// SigLIP-So400m) are fresh pages, made in parallel and mapped ahead of their zeroing: made one
// after another they were a second of a `run --reference`, most of it first touches.
DeviceWeights zero_device_weights(const Workload& w) {
  const uint32_t H = w.hidden, M = w.mlp;
  const auto gemm = [](uint32_t in, uint32_t out) {
    DeviceGemm g{in, out, {}, std::vector<uint16_t>(out), 0};
    arch::resize_populated(g.weight, size_t{in} * out);
    return g;
  };
  DeviceWeights d;
  d.hidden = H;
  d.weight_scale = device_weight_scale(w);
  d.patch = gemm(w.patch_values(), H);
  d.position.assign(size_t{w.rows()} * H, 0);
  d.layers.resize(w.layers);
  tbb::parallel_for(uint32_t{0}, w.layers, [&](uint32_t l) {
    d.layers[l] = DeviceLayer{gemm(H, 3 * H), gemm(H, H), gemm(H, M), gemm(M, H)};
  });
  d.final_gamma.assign(H, 0);
  d.final_beta.assign(H, 0);
  return d;
}

size_t value_count(const DeviceWeights& d) {
  size_t n = d.patch.weight.size() + d.patch.bias.size() + d.position.size() + 2 * size_t{d.hidden};
  for (const DeviceLayer& L : d.layers) {
    for (const DeviceGemm* g : {&L.qkv, &L.out, &L.up, &L.down}) n += g->weight.size() + g->bias.size();
  }
  return n;
}

// Reads one block copy's bytes into d (which the caller owns, so the const view may be written);
// a replicated value must agree with what another tile's copy gave. `seen` marks the values
// of the block's tensor read so far.
void read_block_copy(DeviceWeights& d, const WeightBlock& block, uint32_t layer, const uint8_t* in,
                     std::vector<uint8_t>& seen) {
  const TensorRef t = block_tensor(d, block, layer);
  seen.resize(size_t{t.rows} * t.columns);
  size_t at = 0;
  const uint32_t width = block.columns.end - block.columns.begin;
  for (uint32_t r = block.rows.begin; r < block.rows.end; ++r) {
    const auto slice = seen.begin() + static_cast<std::ptrdiff_t>(size_t{r} * t.columns + block.columns.begin);
    if (t.bytes != nullptr && std::find(slice, slice + width, 1) == slice + width) {
      // No value of this row slice was read before (the usual case): nothing to agree with.
      std::memcpy(const_cast<uint8_t*>(t.bytes) + (slice - seen.begin()), in + at, width);
      std::fill_n(slice, width, 1);
      at += width;
      continue;
    }
    for (uint32_t c = block.columns.begin; c < block.columns.end; ++c) {
      const size_t i = size_t{r} * t.columns + c;
      const uint16_t value = t.bytes != nullptr ? in[at] : static_cast<uint16_t>(in[at] | in[at + 1] << 8);
      at += t.bytes != nullptr ? 1 : 2;
      const uint16_t held = t.bytes != nullptr ? t.bytes[i] : t.halves[i];
      if (seen[i] && held != value) {
        throw InputError("tile " + std::to_string(block.tile) + ": tensor " + block.tensor +
                         (block.copies > 1 ? " (layer " + std::to_string(layer) + ")" : "") + ": value [" +
                         std::to_string(r) + ", " + std::to_string(c) + "] differs from another tile's copy");
      }
      seen[i] = 1;
      if (t.bytes != nullptr) {
        const_cast<uint8_t*>(t.bytes)[i] = static_cast<uint8_t>(value);
      } else {
        const_cast<uint16_t*>(t.halves)[i] = value;
      }
    }
  }
}

}  // namespace

DeviceWeights read_device_weights(const arch::Package& package, const std::vector<WeightBlock>& blocks,
                                  const Workload& w) {
  DeviceWeights d = zero_device_weights(w);
  // Every copy of every block, grouped by the tensor it fills. Tensors are read in parallel,
  // each one's copies in order; a failure is the one the first failing copy in order gives.
  struct BlockCopy {
    const WeightBlock* block;
    uint32_t layer;
  };
  std::vector<BlockCopy> copies;
  for (const WeightBlock& block : blocks) {
    for (uint32_t layer = 0; layer < block.copies; ++layer) copies.push_back({&block, layer});
  }
  std::vector<uint32_t> tensor_of(copies.size());
  std::map<const void*, uint32_t> tensor_index;
  size_t named = copies.size();  // copies before this one name a tensor
  std::exception_ptr naming_failure;
  for (size_t i = 0; i < copies.size(); ++i) {
    try {
      const void* data = block_tensor(d, *copies[i].block, copies[i].layer).data();
      tensor_of[i] = tensor_index.try_emplace(data, static_cast<uint32_t>(tensor_index.size())).first->second;
    } catch (...) {
      named = i;
      naming_failure = std::current_exception();
      break;
    }
  }
  const arch::Groups tensors = arch::group_by(named, tensor_index.size(), [&](size_t i) { return tensor_of[i]; });
  std::vector<size_t> failed_copy(tensors.size(), SIZE_MAX);
  std::vector<std::exception_ptr> failure(tensors.size());
  std::vector<size_t> read_values(tensors.size(), 0);
  tbb::parallel_for(size_t{0}, tensors.size(), [&](size_t g) {
    std::vector<uint8_t> seen;
    for (const uint32_t i : tensors.of(g)) {
      try {
        const WeightBlock& block = *copies[i].block;
        const uint32_t stride = block.stride == 0 ? block.bytes() : block.stride;
        const uint32_t address = block.base + copies[i].layer * stride;
        const uint8_t* in = arch::initial_bytes(package, block.tile, address, block.bytes());
        if (in == nullptr) {
          throw InputError("tile " + std::to_string(block.tile) + ": tensor " + block.tensor + ": no weight bytes at " +
                           arch::hex(address) + " (" + std::to_string(block.bytes()) + " bytes)");
        }
        read_block_copy(d, block, copies[i].layer, in, seen);
      } catch (...) {
        failed_copy[g] = i;
        failure[g] = std::current_exception();
        return;
      }
    }
    read_values[g] = static_cast<size_t>(std::count(seen.begin(), seen.end(), 1));
  });
  size_t first_failed = named;
  std::exception_ptr first_failure = naming_failure;
  for (size_t g = 0; g < tensors.size(); ++g) {
    if (failed_copy[g] < first_failed) {
      first_failed = failed_copy[g];
      first_failure = failure[g];
    }
  }
  if (first_failure) std::rethrow_exception(first_failure);
  size_t read = 0;
  for (const size_t n : read_values) read += n;
  if (read != value_count(d)) {
    throw InputError("the weight blocks hold " + std::to_string(read) + " of the model's " +
                     std::to_string(value_count(d)) + " values");
  }
  return d;
}

}  // namespace lockstep::workload
