#pragma once
// Watched words (`run --watch TILE:ADDRESS[:BYTES]`): every write into a watched range, with
// when it happened and who wrote it. The writers report here: the loader, the exchange fabric
// (each received word, by sender and source address), kernels (each word a kernel changed),
// supervisor stores (patches), the bulk patcher and host phases. Each tile's records are its
// own, so tiles running kernels on several threads never share one; the run merges them in
// (cycle, tile, address, order) order.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::model {

class Sram;

struct WatchRange {
  uint32_t tile = 0;     // logical
  uint32_t address = 0;  // 4-aligned
  uint32_t bytes = 4;    // multiple of 4
};

struct WatchWrite {
  uint32_t tile = 0;
  uint32_t address = 0;  // the word's
  uint64_t cycle = 0;
  uint32_t phase = 0;      // the phase the tile was in (its last exchange's)
  uint32_t iteration = 0;  // Repeat iteration
  std::string writer;      // "exchange from tile 0 address 0x60000", "kernel fill", ...
  uint32_t old_word = 0;
  uint32_t new_word = 0;
  std::vector<std::pair<uint32_t, uint64_t>> operands;  // a kernel's: each operand's address and bytes
};

// When and where in the program a write happened.
struct WriteContext {
  uint64_t cycle = 0;
  uint32_t phase = 0;
  uint32_t iteration = 0;
};

class Watcher {
 public:
  explicit Watcher(const std::vector<WatchRange>& ranges);

  bool watches(uint32_t tile) const { return tiles_.count(tile) != 0; }
  // Words [address, address + bytes) were just written (the writer knows it wrote them, even
  // with the value they held): each watched one is reported.
  void written(uint32_t tile, uint32_t address, uint32_t bytes, const Sram& memory, const std::string& writer,
               const WriteContext& when);
  // Something wrote an unknown set of words (a kernel): each watched word that changed is reported.
  void changed(uint32_t tile, const Sram& memory, const std::string& writer, const WriteContext& when,
               const std::vector<std::pair<uint32_t, uint64_t>>& operands = {});
  // Every record, in (cycle, tile, address, order) order.
  std::vector<WatchWrite> records() const;

 private:
  struct TileWatch {
    std::vector<WatchRange> ranges;
    std::map<uint32_t, uint32_t> words;  // each watched word's value as last reported
    std::vector<WatchWrite> records;
  };
  void report(TileWatch& t, uint32_t tile, uint32_t address, uint32_t value, const std::string& writer,
              const WriteContext& when, const std::vector<std::pair<uint32_t, uint64_t>>& operands = {});
  std::map<uint32_t, TileWatch> tiles_;
};

}  // namespace lockstep::model
