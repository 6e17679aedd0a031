#include "model/sram.hpp"

#include <sys/mman.h>

#include <new>
#include <stdexcept>
#include <string>

#include "io/mapped_file.hpp"

namespace lockstep::model {
namespace {

// Private anonymous pages read as zero and take memory only once written; NORESERVE keeps
// 1,472 untouched tiles from counting against the commit limit.
uint8_t* map_zeroed(size_t bytes) {
  void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  return static_cast<uint8_t*>(mapped);
}

}  // namespace

Sram::Sram(const arch::MachineDescription& machine)
    : base_(machine.sram_base),
      end_(machine.sram_end),
      interleaved_base_(machine.interleaved_base),
      data_(map_zeroed(end_ - base_)) {}

Sram::Sram(const arch::MachineDescription& machine, SramArena& arena, size_t slot)
    : base_(machine.sram_base),
      end_(machine.sram_end),
      interleaved_base_(machine.interleaved_base),
      data_(arena.slot(slot)),
      arena_(&arena) {}

Sram::~Sram() {
  if (arena_ == nullptr && data_ != nullptr) ::munmap(data_, end_ - base_);
}

Sram::Sram(Sram&& other) noexcept
    : base_(other.base_),
      end_(other.end_),
      interleaved_base_(other.interleaved_base_),
      data_(other.data_),
      arena_(other.arena_) {
  other.data_ = nullptr;
}

// Slots rounded up to whole pages (the write epochs' pages too), so that no two tiles share one.
SramArena::SramArena(const arch::MachineDescription& machine, size_t tiles)
    : slot_bytes_((size_t{machine.sram_end - machine.sram_base} + WriteEpochs::kPageBytes - 1) /
                  WriteEpochs::kPageBytes * WriteEpochs::kPageBytes),
      bytes_(slot_bytes_ * tiles),
      epochs_(bytes_ >> WriteEpochs::kPageShift) {
  if (bytes_ != 0) data_ = map_zeroed(bytes_);
}

SramArena::~SramArena() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

// Mapping pages writes nothing, so the write epochs are not marked.
void Sram::populate(uint32_t address, uint32_t bytes) {
  check(address, bytes, "write");
  arch::populate_for_write(data_ + (address - base_), bytes);
}

std::span<uint32_t> Sram::mutable_words(uint32_t address, uint32_t bytes) {
  if (address % 4 != 0 || bytes % 4 != 0) {
    throw std::invalid_argument("SRAM words at " + std::to_string(address) + ", " + std::to_string(bytes) +
                                " bytes: not whole words");
  }
  // The storage is page-aligned (a mapping of its own or an arena slot), so the words are too.
  return {reinterpret_cast<uint32_t*>(mutable_span(address, bytes).data()), bytes / 4};
}

void Sram::refuse(uint32_t address, const char* what) {
  throw std::out_of_range(std::string("SRAM ") + what + " outside memory at " + std::to_string(address));
}

}  // namespace lockstep::model
