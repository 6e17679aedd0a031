#pragma once
// What both importers (Lockstep's images, sim/device/application_import.cpp, and the IPU21
// stack's, sim/device/application_import_stack.cpp) share.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arch/topology.hpp"
#include "formats/package.hpp"
#include "sim/device/application.hpp"

namespace lockstep::arch {

// Numbers a tile's exchange steps in pre-order from `next`, taking each one's phase id,
// label and operation from `plan` (one entry per exchange step, in the same order) when
// given; every phase met is added to `phases`.
void assign_phases(std::vector<Step>& steps, const std::vector<PlanStep>* plan, uint32_t& next,
                   std::map<uint32_t, Phase>& phases);

// The image's inputs, outputs and weights as package bindings on logical tiles. InputError
// naming the binding when its shape's element count times its dtype's size overflows 64 bits
// or differs from its bytes (max fileOffset + size over its slices).
void import_bindings(const Application& app, const Topology& topology, Package& package, const std::string& file_name);

// Checks a debug region the import reads code or memory through before it is used: it must
// lie inside tile memory [0x4c000, 0xe8000). InputError "WHERE: debug region \"NAME\" at
// 0xffffff00+16 lies outside tile memory [0x4c000, 0xe8000)".
void check_region_in_memory(const DebugRegion& region, const std::string& where);

// What the model cannot take from an image, refused before any tile is read: device config
// writes ("FILE: deviceConfigWrites: 2 writes: the model has no device configuration
// registers").
void refuse_unmodelled(const Application& app, const std::string& file_name);

// The image's host exchange as the package's host session (application_import_host.cpp):
// host addresses are offsets in the pages back to back in attach order. InputError for a page
// that is not attached, or more than 4 GiB of pages.
HostSession import_host_session(const Application& app, const std::string& file_name);

// The package both importers end with: the tiles sorted, the phases met, the image's
// bindings, the machine's name and digest, validated against the machine.
Package assemble_imported_package(std::vector<TileProgram> tiles, const std::map<uint32_t, Phase>& phases,
                                  const Application& app, const MachineDescription& machine,
                                  const std::string& file_name);

}  // namespace lockstep::arch
