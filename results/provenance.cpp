#include "results/provenance.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/package.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "io/report_files.hpp"
#include "io/yaml_reader.hpp"

namespace lockstep::replay {

namespace {

constexpr const char* kFormat = "lockstep-report-provenance";
constexpr int kVersion = 1;

nlohmann::ordered_json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}

std::string text_of(const nlohmann::json& object, const char* key) {
  const auto& value = object.at(key);
  return value.is_null() ? std::string() : value.get<std::string>();
}

}  // namespace

std::string lockstep_build_text(const std::string& version, const std::string& commit) {
  return version + " (commit " + commit + ")";
}

std::string file_fnv1a64(const std::string& path) {
  const arch::MappedFile file(path);
  return arch::hex(arch::fnv1a64(file.data(), file.size()));
}

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string provenance_json_text(const ReportProvenance& p) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["capture"] = {{"file", text_or_null(p.capture)}, {"fnv1a64", text_or_null(p.capture_fnv1a64)}};
  j["machine"] = {{"name", text_or_null(p.machine)}, {"digest", text_or_null(p.machine_digest)}};
  j["sweep_lockstep"] = text_or_null(p.sweep_lockstep);
  j["report_lockstep"] = text_or_null(p.report_lockstep);
  j["program_cycles"] = p.program_cycles ? nlohmann::ordered_json(*p.program_cycles) : nlohmann::ordered_json(nullptr);
  // ensure_ascii: any byte of a file name comes out as text a JSON reader takes back.
  return j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

ReportProvenance parse_provenance_json(const std::string& text, const std::string& file_name) {
  ReportProvenance p;
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", "") != kFormat) {
      throw InputError(file_name + ": not a report provenance file (format '" + kFormat + "')");
    }
    if (j.at("version") != kVersion) {
      throw InputError(file_name + ": provenance version " + j.at("version").dump() + ", this Lockstep reads " +
                       std::to_string(kVersion));
    }
    p.capture = text_of(j.at("capture"), "file");
    p.capture_fnv1a64 = text_of(j.at("capture"), "fnv1a64");
    p.machine = text_of(j.at("machine"), "name");
    p.machine_digest = text_of(j.at("machine"), "digest");
    p.sweep_lockstep = text_of(j, "sweep_lockstep");
    p.report_lockstep = text_of(j, "report_lockstep");
    if (!j.at("program_cycles").is_null()) p.program_cycles = j.at("program_cycles").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file_name + ": unreadable provenance: " + e.what());
  }
  return p;
}

std::optional<ReportProvenance> read_provenance(const std::string& dir) {
  const std::string path = join_path(dir, kProvenanceFile);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return parse_provenance_json(arch::read_text_file(path), path);
}

}  // namespace lockstep::replay
