// An image's host exchange (IPU21-DEVICE.md 12.1, 13, 17.1) as the package's host session:
// the pages back to back in attach order make the host address space the tiles' packets
// address [inferred in 13: "device host address space is pages in attach order"]; a call's
// input file is the weights' bytes for `initialize` and the inputs' for any other call, its
// output file the outputs' (17.1's layout). docs/device.md, "Host phases".
#include <map>

#include "io/errors.hpp"
#include "io/printable.hpp"
#include "sim/device/application_import_parts.hpp"

namespace lockstep::arch {
namespace {

std::vector<std::string> names_of(const std::vector<AppBinding>& bindings) {
  std::vector<std::string> out;
  for (const AppBinding& b : bindings) out.push_back(b.name);
  return out;
}

}  // namespace

HostSession import_host_session(const Application& app, const std::string& file_name) {
  const HostExchange& host = app.host_exchange;
  HostSession session;
  if (host.calls.empty()) return session;
  std::map<uint32_t, uint64_t> base;
  uint64_t total = 0;
  for (const uint32_t index : host.attach_order) {
    for (const HostPage& page : host.pages) {
      if (page.index != index) continue;
      base[index] = total;
      total += page.size;
    }
  }
  if (total > UINT32_MAX) {
    throw InputError(file_name + ": hostExchange.pages: " + std::to_string(total) +
                     " bytes attached: the tiles address at most 4 GiB of host pages");
  }
  const auto address = [&](uint32_t page, uint64_t offset, const std::string& where) {
    const auto it = base.find(page);
    if (it == base.end()) {
      throw InputError(file_name + ": " + where + ": page " + std::to_string(page) +
                       " is not attached (not in attachOrder): the tiles cannot address it");
    }
    return static_cast<uint32_t>(it->second + offset);
  };
  session.arena_bytes = static_cast<uint32_t>(total);
  session.command_address = address(host.command_page, host.command_offset, "hostExchange.commandPage");
  for (size_t c = 0; c < host.calls.size(); ++c) {
    const HostCall& call = host.calls[c];
    const std::string where = "hostExchange.calls[" + std::to_string(c) + "] (" + printable(call.name) + ")";
    HostCallSpec spec;
    spec.name = call.name;
    spec.command = call.command;
    spec.phases = call.phases;
    for (const auto* list : {&call.inputs, &call.outputs}) {
      auto& out = list == &call.inputs ? spec.inputs : spec.outputs;
      for (const HostSlice& s : *list) {
        out.push_back({address(s.page, s.page_offset, where), s.file_offset, static_cast<uint32_t>(s.size)});
      }
    }
    spec.input_batch_ends = call.input_batch_ends;
    spec.output_batch_ends = call.output_batch_ends;
    if (!call.inputs.empty()) spec.input_bindings = names_of(call.name == "initialize" ? app.weights : app.inputs);
    if (!call.outputs.empty()) spec.output_bindings = names_of(app.outputs);
    session.calls.push_back(std::move(spec));
  }
  return session;
}

}  // namespace lockstep::arch
