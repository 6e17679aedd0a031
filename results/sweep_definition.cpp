#include "results/sweep_definition.hpp"

#include <algorithm>
#include <set>

#include "io/errors.hpp"
#include "io/yaml_reader.hpp"
#include "results/config_name.hpp"

namespace lockstep::replay {

std::string PointRef::name() const { return width == compiler::Width::Paired64 ? config + "p" : config; }

PointRef parse_point_ref(const std::string& text, const std::string& what) {
  PointRef ref;
  ref.config = text;
  if (!is_config_name(text) && text.size() > 1 && text.back() == 'p' &&
      is_config_name(text.substr(0, text.size() - 1))) {
    ref.config = text.substr(0, text.size() - 1);
    ref.width = compiler::Width::Paired64;
  }
  if (!is_config_name(ref.config)) {
    throw InputError(what + ": '" + text +
                     "' is not a configuration name (latency, automatic, remaining-combined, "
                     "S<W> or B<W>, with a `p` suffix for the paired-width alternative)");
  }
  return ref;
}

SweepDefinition parse_sweep_definition(const std::string& text, const std::string& file_name) {
  const YAML::Node root = arch::parse_yaml_text(text, file_name);
  if (!root.IsMap()) arch::yaml_fail(file_name, root, "", "expected a mapping");
  arch::YamlMap map(root, file_name, "");
  SweepDefinition sweep;
  sweep.file = file_name;

  const auto configurations = map.list("configurations");
  if (configurations.empty()) {
    arch::yaml_fail(file_name, map.node()["configurations"], "configurations", "empty list");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < configurations.size(); ++i) {
    const std::string key = "configurations[" + std::to_string(i) + "]";
    const std::string name = arch::yaml_string(configurations[i], file_name, key);
    if (!is_config_name(name)) {
      arch::yaml_fail(file_name, configurations[i], key,
                      "'" + name +
                          "' is not a configuration name (latency, automatic, "
                          "remaining-combined, S<W> or B<W>)");
    }
    if (!names.insert(name).second) {
      arch::yaml_fail(file_name, configurations[i], key, "'" + name + "' is listed twice");
    }
    sweep.configurations.push_back(name);
  }

  const std::string reference = map.string("reference");
  const YAML::Node reference_node = map.node()["reference"];
  try {
    sweep.reference = parse_point_ref(reference, "reference");
  } catch (const InputError&) {
    arch::yaml_fail(file_name, reference_node, "reference", "'" + reference + "' is not a configuration name");
  }
  if (!names.count(sweep.reference.config)) {
    arch::yaml_fail(file_name, reference_node, "reference",
                    "'" + sweep.reference.config + "' is not one of the configurations");
  }

  if (map.has("max_row_growth_bytes")) {
    const auto growth = map.list("max_row_growth_bytes");
    for (size_t i = 0; i < growth.size(); ++i) {
      const std::string key = "max_row_growth_bytes[" + std::to_string(i) + "]";
      const uint64_t k = arch::yaml_unsigned(growth[i], file_name, key, UINT32_MAX);
      if (std::find(sweep.max_row_growth_bytes.begin(), sweep.max_row_growth_bytes.end(), k) !=
          sweep.max_row_growth_bytes.end()) {
        arch::yaml_fail(file_name, growth[i], key, std::to_string(k) + " is listed twice");
      }
      sweep.max_row_growth_bytes.push_back(k);
    }
  }
  map.finish();
  return sweep;
}

SweepDefinition load_sweep_definition(const std::string& source) {
  return parse_sweep_definition(arch::read_text_file(source), source);
}

}  // namespace lockstep::replay
