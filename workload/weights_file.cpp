#include "workload/weights_file.hpp"

#include <cmath>
#include <cstring>

#include "formats/safetensors.hpp"
#include "io/errors.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::workload {

ModelWeights load_weights_file(const std::string& path, const Workload& w, bool allow_non_finite) {
  const arch::SafeTensors file = arch::read_safetensors(path);
  ModelWeights m;
  for (NamedTensor& t : named_tensors(m, w)) {
    const std::vector<uint64_t> shape(t.shape.begin(), t.shape.end());
    const arch::SafeTensor* found = file.find(t.name);
    const std::string dtype = found != nullptr && found->dtype == "F16" ? "F16" : "F32";
    if (found != nullptr && found->dtype != "F16" && found->dtype != "F32") {
      throw InputError(path + ": tensor '" + t.name + "': dtype: expected F32 or F16, got " + found->dtype);
    }
    const arch::SafeTensor& tensor = file.get(t.name, dtype, shape);  // missing or wrong shape: InputError
    const size_t n = tensor.bytes.size() / (dtype == "F16" ? 2 : 4);
    t.values->resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (dtype == "F16") {
        uint16_t bits;
        std::memcpy(&bits, tensor.bytes.data() + 2 * i, 2);
        (*t.values)[i] = arch::fp16_to_float(bits);
      } else {
        std::memcpy(&(*t.values)[i], tensor.bytes.data() + 4 * i, 4);
      }
      if (!allow_non_finite && !std::isfinite((*t.values)[i])) {
        throw InputError(path + ": tensor '" + t.name + "': element " + std::to_string(i) + " is " +
                         (std::isnan((*t.values)[i]) ? "nan" : "inf") +
                         ", which poisons every output (build --allow-non-finite keeps it)");
      }
    }
  }
  return m;
}

}  // namespace lockstep::workload
