#pragma once
// The rules of a package's host phases and host session (docs/formats.md, "Validation"),
// split out of validate_package, which calls them. Each throws InputError on the first failure.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/package.hpp"

namespace lockstep::arch {

// Every tile has the same number of host steps (Repeat bodies included), and a package with
// any has a host arena and a call. Returns that number.
uint64_t check_host_phases(const Package& package, const std::string& file_name);

// The session: the command word and every call's slices inside the arena, call names, batch
// ends, bindings and file ranges, and the calls' phases adding up to `host_phases`.
void check_host_session(const Package& package, uint64_t host_phases, const std::string& file_name);

// Where each of the step's transfers meets tile memory on the device: a host-to-tile one
// outside the packet window lands in the staging buffer (arch/host_packets.hpp).
std::vector<uint32_t> host_landing_addresses(const HostStep& step);
// "" when the step's staged transfers fit the staging buffer clear of its direct ones.
std::string host_staging_misfit(const HostStep& step);

}  // namespace lockstep::arch
