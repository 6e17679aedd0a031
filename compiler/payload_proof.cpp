#include "compiler/payload_proof.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "formats/token.hpp"
#include "io/errors.hpp"
#include "io/parallel.hpp"

namespace lockstep::compiler {
namespace {

constexpr uint32_t kZeroOrigin = 0xffffffffu;
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

// A stretch of content: `bytes` zero bytes (origin_tile kZeroOrigin), or the payload tokens
// of origin_tile's words from origin_address on. Copies move origins, never bytes.
struct Piece {
  uint32_t bytes = 0;
  uint32_t origin_tile = kZeroOrigin;
  uint32_t origin_address = 0;
  bool operator==(const Piece&) const = default;
};
using Content = std::vector<Piece>;

// Appends a piece, joined to the last one when it continues it: equal content, equal pieces.
void append(Content& out, const Piece& piece) {
  if (piece.bytes == 0) return;
  if (!out.empty()) {
    Piece& last = out.back();
    const bool zeros = last.origin_tile == kZeroOrigin && piece.origin_tile == kZeroOrigin;
    const bool continues = last.origin_tile == piece.origin_tile && piece.origin_tile != kZeroOrigin &&
                           last.origin_address + last.bytes == piece.origin_address;
    if (zeros || continues) {
      last.bytes += piece.bytes;
      return;
    }
  }
  out.push_back(piece);
}

Piece zeros(uint32_t bytes) { return Piece{bytes, kZeroOrigin, 0}; }

// What every transfer of a phase read in one iteration, by transfer index.
using Reads = std::vector<Content>;

// Bytes [offset, offset + bytes) of what transfer k read.
void append_slice(Content& out, const Reads& reads, uint32_t k, uint32_t offset, uint32_t bytes) {
  const uint32_t end = offset + bytes;
  uint32_t at = 0;
  for (const Piece& piece : reads[k]) {
    if (at >= end) break;
    const uint32_t lo = std::max(at, offset), hi = std::min(at + piece.bytes, end);
    if (lo < hi) {
      append(out, piece.origin_tile == kZeroOrigin
                      ? zeros(hi - lo)
                      : Piece{hi - lo, piece.origin_tile, piece.origin_address + (lo - at)});
    }
    at += piece.bytes;
  }
}

// Who last wrote a stretch of a tile's memory: the payload tokens it started with, or a
// phase (its write plan, applied to the reads of that phase's latest iteration). Gaps hold zero.
constexpr int32_t kInitial = -1;
struct Owned {
  uint32_t begin = 0;
  uint32_t end = 0;
  int32_t owner = kInitial;
};
using OwnerMap = std::vector<Owned>;  // sorted by begin, disjoint

// The map with `spans` (sorted, merged) now owned by `owner`.
OwnerMap overlay(const OwnerMap& map, const std::vector<Span>& spans, int32_t owner) {
  if (spans.empty()) return map;
  OwnerMap out;
  out.reserve(map.size() + 2 * spans.size());
  size_t first_span = 0;
  for (const Owned& owned : map) {
    uint32_t cursor = owned.begin;
    while (first_span < spans.size() && spans[first_span].address + spans[first_span].bytes <= cursor) ++first_span;
    for (size_t s = first_span; cursor < owned.end; ++s) {
      if (s == spans.size() || spans[s].address >= owned.end) {
        out.push_back(Owned{cursor, owned.end, owned.owner});
        break;
      }
      if (spans[s].address > cursor) out.push_back(Owned{cursor, spans[s].address, owned.owner});
      cursor = std::max(cursor, spans[s].address + spans[s].bytes);
    }
  }
  for (const Span& span : spans) out.push_back(Owned{span.address, span.address + span.bytes, owner});
  std::sort(out.begin(), out.end(), [](const Owned& a, const Owned& b) { return a.begin < b.begin; });
  return out;
}

// One stretch of a phase's write plan on a tile: [begin, end) holds what `transfer` read,
// from byte `offset` of its read on.
struct Segment {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t transfer = 0;
  uint32_t offset = 0;
};
using WritePlan = std::vector<Segment>;  // sorted by begin, disjoint

// Last writer wins: walk the writes backwards and keep only what no later write covers.
WritePlan paint(const std::vector<Segment>& writes) {
  WritePlan plan;
  std::map<uint32_t, uint32_t> covered;  // begin -> end, merged
  for (size_t w = writes.size(); w-- > 0;) {
    const Segment& write = writes[w];
    uint32_t cursor = write.begin;
    auto it = covered.upper_bound(cursor);
    if (it != covered.begin() && std::prev(it)->second > cursor) --it;
    for (; cursor < write.end; ++it) {
      const uint32_t gap_end = it == covered.end() ? write.end : std::min(it->first, write.end);
      if (gap_end > cursor)
        plan.push_back(Segment{cursor, gap_end, write.transfer, write.offset + (cursor - write.begin)});
      if (it == covered.end()) break;
      cursor = std::max(cursor, it->second);
    }
    // Record the write as covered, merging with neighbours.
    uint32_t begin = write.begin, end = write.end;
    auto next = covered.upper_bound(begin);
    if (next != covered.begin() && std::prev(next)->second >= begin) {
      --next;
      begin = next->first;
      end = std::max(end, next->second);
      next = covered.erase(next);
    }
    while (next != covered.end() && next->first <= end) {
      end = std::max(end, next->second);
      next = covered.erase(next);
    }
    covered.emplace(begin, end);
  }
  std::sort(plan.begin(), plan.end(), [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
  return plan;
}

// Per tile position: which transfer's read every destination byte of the phase holds.
std::vector<WritePlan> write_plans(const arch::CapturePhase& phase, const std::vector<uint32_t>& position_of,
                                   size_t tile_count) {
  std::vector<std::vector<Segment>> writes(tile_count);
  for (uint32_t k = 0; k < phase.transfers.size(); ++k) {
    const arch::Transfer& transfer = phase.transfers[k];
    const uint32_t bytes = transfer.words * 4;
    if (bytes == 0) continue;
    for (const arch::Destination& d : transfer.destinations) {
      writes[position_of[d.tile]].push_back(Segment{d.address, d.address + bytes, k, 0});
    }
  }
  std::vector<WritePlan> plans(tile_count);
  arch::parallel_for_each(size_t{0}, tile_count, [&](size_t t) {
    WritePlan sorted = writes[t];
    std::sort(sorted.begin(), sorted.end(), [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
    bool overlapping = false;
    for (size_t i = 1; i < sorted.size() && !overlapping; ++i) overlapping = sorted[i].begin < sorted[i - 1].end;
    // Disjoint writes (the usual case) are the plan; overlapping ones are painted in write order.
    plans[t] = overlapping ? paint(writes[t]) : std::move(sorted);
  });
  return plans;
}

// Digests of content: fnv1a64 (expectations) and xxh3_64 (the checksum_xxh3 slots), a batch
// of tokens at a time; a run of zeros is never materialised for FNV (a zero byte only
// multiplies).
class ContentHasher {
 public:
  explicit ContentHasher(uint64_t seed) : seed_(seed) {}

  uint64_t xxh3(std::span<const Piece> content) const {
    arch::Xxh3Stream stream;
    visit(content, [&](const uint8_t* bytes, size_t n) { bytes ? stream.update(bytes, n) : stream.update_zeros(n); });
    return stream.digest();
  }

  uint64_t digest(std::span<const Piece> content) const {
    uint64_t hash = kFnvOffset;
    visit(content, [&](const uint8_t* bytes, size_t n) {
      hash = bytes ? arch::fnv1a64(bytes, n, hash) : hash * prime_power(n);
    });
    return hash;
  }

  std::vector<uint8_t> bytes(std::span<const Piece> content) const {
    std::vector<uint8_t> out;
    for (const Piece& piece : content) {
      const size_t at = out.size();
      out.resize(at + piece.bytes, 0);
      if (piece.origin_tile == kZeroOrigin) continue;
      for (uint32_t b = 0; b + 4 <= piece.bytes; b += 4) {
        const uint32_t token = arch::payload_token(seed_, piece.origin_tile, piece.origin_address + b);
        for (int k = 0; k < 4; ++k) out[at + b + k] = static_cast<uint8_t>(token >> (8 * k));
      }
    }
    return out;
  }

 private:
  static uint64_t prime_power(uint64_t exponent) {
    uint64_t result = 1, base = kFnvPrime;
    for (; exponent != 0; exponent >>= 1, base *= base) {
      if (exponent & 1) result *= base;
    }
    return result;
  }
  // Calls fn(bytes, n) for each run of the content in order: n bytes of its tokens, a batch
  // at a time, or nullptr for n zero bytes.
  template <class Fn>
  void visit(std::span<const Piece> content, Fn fn) const {
    static_assert(std::endian::native == std::endian::little, "tokens are stored little-endian");
    std::array<uint32_t, 1024> tokens;
    for (const Piece& piece : content) {
      if (piece.origin_tile == kZeroOrigin) {
        fn(nullptr, piece.bytes);
        continue;
      }
      for (uint32_t done = 0; done < piece.bytes; done += 4 * tokens.size()) {
        const uint32_t words = std::min<uint32_t>(tokens.size(), (piece.bytes - done) / 4);
        arch::payload_tokens(seed_, piece.origin_tile, piece.origin_address + done, 0,
                             std::span<uint32_t>(tokens.data(), words));
        fn(reinterpret_cast<const uint8_t*>(tokens.data()), 4 * size_t(words));
      }
    }
  }
  uint64_t seed_;
};

void append_le(std::vector<uint8_t>& out, uint64_t value) {
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(value >> (8 * k)));
}

uint64_t content_hash(const Content& content) {
  uint64_t h = kFnvOffset;
  for (const Piece& p : content) {
    for (const uint32_t v : {p.bytes, p.origin_tile, p.origin_address}) {
      h ^= v;
      h *= kFnvPrime;
    }
  }
  return h;
}

// XXH3 digests of content already hashed in this phase: different ranges holding the same
// content, and iterations that cycle through the same sources, hash it once.
class DigestMemo {
 public:
  explicit DigestMemo(const ContentHasher& hasher) : hasher_(hasher) {}

  // Content rarely repeats across phases: forgetting it between phases bounds the memory.
  void clear() {
    index_.clear();
    known_.clear();
    digests_.clear();
  }

  // Digest of every content, in order.
  std::vector<uint64_t> digests(std::vector<Content>& contents) {
    std::vector<uint64_t> hashes(contents.size());
    arch::parallel_for_each(size_t{0}, contents.size(), [&](size_t i) { hashes[i] = content_hash(contents[i]); });
    std::vector<uint32_t> entry(contents.size());
    std::vector<size_t> missing;  // entries to hash, by the content that introduced them
    for (size_t i = 0; i < contents.size(); ++i) {
      entry[i] = find_or_add(hashes[i], contents[i], missing, i);
    }
    std::vector<uint64_t> fresh(missing.size());
    arch::parallel_for_each(size_t{0}, missing.size(),
                            [&](size_t m) { fresh[m] = hasher_.xxh3(contents[missing[m]]); });
    const size_t first_new = digests_.size();
    digests_.resize(known_.size());
    for (size_t m = 0; m < missing.size(); ++m) digests_[first_new + m] = fresh[m];
    std::vector<uint64_t> out(contents.size());
    for (size_t i = 0; i < contents.size(); ++i) out[i] = digests_[entry[i]];
    return out;
  }

 private:
  uint32_t find_or_add(uint64_t hash, Content& content, std::vector<size_t>& missing, size_t i) {
    const auto [first, last] = index_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (known_[it->second] == content) return it->second;
    }
    const auto id = static_cast<uint32_t>(known_.size());
    index_.emplace(hash, id);
    known_.push_back(content);
    missing.push_back(i);
    return id;
  }

  const ContentHasher& hasher_;
  std::unordered_multimap<uint64_t, uint32_t> index_;
  std::vector<Content> known_;
  std::vector<uint64_t> digests_;  // by entry; entries added in this call are filled at its end
};

// The destination ranges a phase checksums, grouped by layout: ranges that receive the same
// transfers at the same offsets hold the same content in every iteration.
struct RangeGroups {
  std::vector<std::pair<uint32_t, Span>> representatives;  // (tile position, range)
  std::vector<std::vector<uint32_t>> transfers;            // per group: the transfers it holds
  // Per tile position, per checksum, per range: the range's group.
  std::vector<std::vector<std::vector<uint32_t>>> group_of;
};

struct SignatureHash {
  size_t operator()(const std::vector<uint32_t>& signature) const {
    uint64_t h = kFnvOffset;
    for (const uint32_t v : signature) {
      h ^= v;
      h *= kFnvPrime;
    }
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

// The plan's segments inside [begin, end): the first index and one past the last.
std::pair<size_t, size_t> segments_within(const WritePlan& plan, uint32_t begin, uint32_t end) {
  auto first =
      std::upper_bound(plan.begin(), plan.end(), begin, [](uint32_t a, const Segment& s) { return a < s.begin; });
  if (first != plan.begin() && std::prev(first)->end > begin) --first;
  auto last = std::lower_bound(first, plan.end(), end, [](const Segment& s, uint32_t a) { return s.begin < a; });
  return {static_cast<size_t>(first - plan.begin()), static_cast<size_t>(last - plan.begin())};
}

RangeGroups group_ranges(const std::vector<ProofTile>& tiles, size_t p, const std::vector<WritePlan>& plans) {
  RangeGroups groups;
  groups.group_of.resize(tiles.size());
  std::unordered_map<std::vector<uint32_t>, uint32_t, SignatureHash> known;
  std::vector<uint32_t> signature;
  for (size_t t = 0; t < tiles.size(); ++t) {
    for (const ProofChecksum& checksum : tiles[t].checksums[p]) {
      std::vector<uint32_t>& ids = groups.group_of[t].emplace_back();
      for (const Span& range : checksum.ranges) {
        const uint32_t end = range.address + range.bytes;
        signature.assign({range.bytes});
        const auto [first, last] = segments_within(plans[t], range.address, end);
        for (size_t s = first; s < last; ++s) {
          const Segment& segment = plans[t][s];
          const uint32_t lo = std::max(segment.begin, range.address), hi = std::min(segment.end, end);
          signature.insert(signature.end(),
                           {lo - range.address, hi - lo, segment.transfer, segment.offset + (lo - segment.begin)});
        }
        const auto [it, added] = known.emplace(signature, static_cast<uint32_t>(groups.representatives.size()));
        if (added) {
          groups.representatives.emplace_back(static_cast<uint32_t>(t), range);
          std::vector<uint32_t>& transfers = groups.transfers.emplace_back();
          for (size_t at = 3; at < signature.size(); at += 4) transfers.push_back(signature[at]);
          std::sort(transfers.begin(), transfers.end());
          transfers.erase(std::unique(transfers.begin(), transfers.end()), transfers.end());
        }
        ids.push_back(it->second);
      }
    }
  }
  return groups;
}

class Prover {
 public:
  Prover(const std::vector<const arch::CapturePhase*>& phases, const std::vector<ProofTile>& tiles, uint64_t seed)
      : phases_(phases),
        tiles_(tiles),
        hasher_(seed),
        memo_(hasher_),
        plans_(phases.size()),
        final_reads_(phases.size()),
        maps_(tiles.size()),
        slots_(tiles.size()) {
    uint32_t largest = 0;
    for (const ProofTile& tile : tiles) largest = std::max(largest, tile.tile);
    position_of_.assign(size_t{largest} + 1, kNoPosition);
    for (size_t t = 0; t < tiles.size(); ++t) {
      position_of_[tiles[t].tile] = static_cast<uint32_t>(t);
      for (const Span& span : tiles[t].sources)
        maps_[t].push_back(Owned{span.address, span.address + span.bytes, kInitial});
      slots_[t].resize(phases.size());
      for (size_t p = 0; p < phases.size(); ++p) slots_[t][p].resize(tiles[t].checksums[p].size());
    }
  }

  std::vector<arch::Expectation> run(const ProofProgress& progress) {
    uint64_t total = 0, done = 0;
    for (const arch::CapturePhase* phase : phases_) total += std::max<uint32_t>(phase->iterations, 1);
    for (size_t p = 0; p < phases_.size(); ++p) {
      const arch::CapturePhase& phase = *phases_[p];
      plans_[p] = write_plans(phase, position_of_, tiles_.size());
      // After the first iteration the phase owns its destination ranges; later iterations
      // read what the previous one wrote there.
      std::vector<OwnerMap> after(tiles_.size());
      arch::parallel_for_each(size_t{0}, tiles_.size(), [&](size_t t) {
        after[t] = overlay(maps_[t], tiles_[t].destinations[p], static_cast<int32_t>(p));
      });
      const RangeGroups groups = group_ranges(tiles_, p, plans_[p]);
      memo_.clear();
      const uint32_t iterations = std::max<uint32_t>(phase.iterations, 1);
      Reads reads(phase.transfers.size());
      std::vector<uint64_t> group_digests(groups.representatives.size(), 0);
      for (uint32_t i = 0; i < iterations; ++i) {
        const std::vector<char> changed = read_sources(p, i, i == 0 ? maps_ : after, reads);
        record_checksums(p, groups, reads, changed, group_digests);
        if (progress) progress(++done, total);
      }
      final_reads_[p] = std::move(reads);
      maps_ = std::move(after);
    }
    return expectations();
  }

 private:
  static constexpr uint32_t kNoPosition = 0xffffffffu;

  uint32_t position(uint32_t tile) const {
    if (tile >= position_of_.size() || position_of_[tile] == kNoPosition) {
      throw CompilerError("payload proof: tile " + std::to_string(tile) + " is not a tile of the package");
    }
    return position_of_[tile];
  }

  // What [begin, end) of tile position t holds under `map`; `current` stands for the reads of
  // the phase being proved (its previous iteration), `current_phase` for its position.
  void resolve(uint32_t t, const OwnerMap& map, uint32_t begin, uint32_t end, size_t current_phase,
               const Reads& current, Content& out) const {
    uint32_t cursor = begin;
    auto it = std::upper_bound(map.begin(), map.end(), begin, [](uint32_t a, const Owned& o) { return a < o.begin; });
    if (it != map.begin() && std::prev(it)->end > begin) --it;
    for (; it != map.end() && it->begin < end; ++it) {
      const uint32_t lo = std::max(it->begin, begin), hi = std::min(it->end, end);
      if (lo >= hi) continue;
      if (lo > cursor) append(out, zeros(lo - cursor));
      if (it->owner == kInitial) {
        append(out, Piece{hi - lo, tiles_[t].tile, lo});
      } else {
        const size_t q = static_cast<size_t>(it->owner);
        const Reads& reads = q == current_phase ? current : final_reads_[q];
        const WritePlan& plan = plans_[q][t];
        uint32_t covered = lo;
        const auto [first, last] = segments_within(plan, lo, hi);
        for (size_t s = first; s < last; ++s) {
          const Segment& segment = plan[s];
          const uint32_t slo = std::max(segment.begin, lo), shi = std::min(segment.end, hi);
          if (slo != covered) throw CompilerError("payload proof: a phase's write plan misses bytes it owns");
          append_slice(out, reads, segment.transfer, segment.offset + (slo - segment.begin), shi - slo);
          covered = shi;
        }
        if (covered != hi) throw CompilerError("payload proof: a phase's write plan misses bytes it owns");
      }
      cursor = hi;
    }
    if (cursor < end) append(out, zeros(end - cursor));
  }

  // Whether transfer k of phase position p may read something else in iteration i (> 0) than
  // in i - 1: another source address, or a source inside the phase's own destinations.
  bool may_change(size_t p, uint32_t k, uint32_t i) const {
    const arch::Transfer& transfer = phases_[p]->transfers[k];
    const size_t count = transfer.source_addresses.size();
    const uint32_t address = transfer.source_addresses[i % count];
    if (address != transfer.source_addresses[(i - 1) % count]) return true;
    const std::vector<Span>& own = tiles_[position(transfer.source_tile)].destinations[p];
    const uint32_t end = address + transfer.words * 4;
    auto it =
        std::upper_bound(own.begin(), own.end(), address, [](uint32_t a, const Span& s) { return a < s.address; });
    if (it != own.begin() && std::prev(it)->address + std::prev(it)->bytes > address) return true;
    return it != own.end() && it->address < end;
  }

  // Brings `reads` (iteration i - 1's) to iteration i of phase position p: every transfer's
  // source as it stood when the iteration began. Only transfers whose source may have changed
  // are read again. Returns, per transfer, whether its read changed (all of them when i is 0).
  std::vector<char> read_sources(size_t p, uint32_t i, const std::vector<OwnerMap>& maps, Reads& reads) const {
    const arch::CapturePhase& phase = *phases_[p];
    std::vector<uint32_t> again;
    for (uint32_t k = 0; k < phase.transfers.size(); ++k) {
      if (i == 0 || may_change(p, k, i)) again.push_back(k);
    }
    std::vector<Content> fresh(again.size());
    arch::parallel_for_each(size_t{0}, again.size(), [&](size_t j) {
      const arch::Transfer& transfer = phase.transfers[again[j]];
      const uint32_t address = transfer.source_addresses[i % transfer.source_addresses.size()];
      const uint32_t t = position(transfer.source_tile);
      resolve(t, maps[t], address, address + transfer.words * 4, p, reads, fresh[j]);
    });
    std::vector<char> changed(phase.transfers.size(), 0);
    for (size_t j = 0; j < again.size(); ++j) {
      Content& read = reads[again[j]];
      if (i > 0 && fresh[j] == read) continue;
      changed[again[j]] = 1;
      read = std::move(fresh[j]);
    }
    return changed;
  }

  // Appends this iteration's digest to every checksum slot of phase position p. Only groups
  // holding a transfer whose read changed are digested again.
  void record_checksums(size_t p, const RangeGroups& groups, const Reads& reads, const std::vector<char>& changed,
                        std::vector<uint64_t>& group_digests) {
    if (groups.representatives.empty()) return;
    std::vector<uint32_t> again;
    for (uint32_t g = 0; g < groups.representatives.size(); ++g) {
      const std::vector<uint32_t>& transfers = groups.transfers[g];
      if (std::any_of(transfers.begin(), transfers.end(), [&](uint32_t k) { return changed[k] != 0; })) {
        again.push_back(g);
      }
    }
    std::vector<Content> contents(again.size());
    arch::parallel_for_each(size_t{0}, again.size(), [&](size_t j) {
      const auto& [t, range] = groups.representatives[again[j]];
      const WritePlan& plan = plans_[p][t];
      const uint32_t end = range.address + range.bytes;
      const auto [first, last] = segments_within(plan, range.address, end);
      for (size_t s = first; s < last; ++s) {
        const Segment& segment = plan[s];
        const uint32_t lo = std::max(segment.begin, range.address), hi = std::min(segment.end, end);
        append_slice(contents[j], reads, segment.transfer, segment.offset + (lo - segment.begin), hi - lo);
      }
    });
    const std::vector<uint64_t> digests = memo_.digests(contents);
    for (size_t j = 0; j < again.size(); ++j) group_digests[again[j]] = digests[j];
    arch::parallel_for_each(size_t{0}, tiles_.size(), [&](size_t t) {
      const auto& checksums = groups.group_of[t];
      for (size_t c = 0; c < checksums.size(); ++c) {
        std::vector<uint8_t>& slot = slots_[t][p][c];
        if (checksums[c].size() == 1) {
          append_le(slot, group_digests[checksums[c][0]]);
          continue;
        }
        std::vector<uint8_t> each;
        for (const uint32_t group : checksums[c]) append_le(each, group_digests[group]);
        append_le(slot, arch::xxh3_64(each.data(), each.size()));
      }
    });
  }

  // The slots, then what every tile's destination ranges hold at the end.
  std::vector<arch::Expectation> expectations() const {
    std::vector<std::vector<arch::Expectation>> per_tile(tiles_.size());
    arch::parallel_for_each(size_t{0}, tiles_.size(), [&](size_t t) {
      const ProofTile& tile = tiles_[t];
      std::vector<arch::Expectation>& out = per_tile[t];
      for (size_t p = 0; p < phases_.size(); ++p) {
        for (size_t c = 0; c < tile.checksums[p].size(); ++c) {
          arch::Expectation expectation;
          expectation.tile = tile.tile;
          expectation.address = tile.checksums[p][c].slot_address;
          expectation.bytes = slots_[t][p][c];
          expectation.size = static_cast<uint32_t>(expectation.bytes.size());
          out.push_back(std::move(expectation));
        }
      }
      std::vector<Span> all;
      for (const auto& ranges : tile.destinations) all.insert(all.end(), ranges.begin(), ranges.end());
      Content content;
      for (const Span& span : merge_spans(std::move(all))) {
        for (uint32_t offset = 0; offset < span.bytes; offset += kExpectationChunkBytes) {
          arch::Expectation expectation;
          expectation.tile = tile.tile;
          expectation.address = span.address + offset;
          expectation.size = std::min(kExpectationChunkBytes, span.bytes - offset);
          content.clear();
          resolve(static_cast<uint32_t>(t), maps_[t], expectation.address, expectation.address + expectation.size,
                  phases_.size(), Reads{}, content);
          if (expectation.size <= kExactExpectationBytes) {
            expectation.bytes = hasher_.bytes(content);
          } else {
            expectation.digest = hasher_.digest(content);
          }
          out.push_back(std::move(expectation));
        }
      }
    });
    std::vector<arch::Expectation> all;
    for (auto& list : per_tile) std::move(list.begin(), list.end(), std::back_inserter(all));
    std::sort(all.begin(), all.end(), [](const arch::Expectation& a, const arch::Expectation& b) {
      return std::tie(a.tile, a.address) < std::tie(b.tile, b.address);
    });
    return all;
  }

  const std::vector<const arch::CapturePhase*>& phases_;
  const std::vector<ProofTile>& tiles_;
  ContentHasher hasher_;
  DigestMemo memo_;
  std::vector<uint32_t> position_of_;
  std::vector<std::vector<WritePlan>> plans_;                          // per phase, per tile position
  std::vector<Reads> final_reads_;                                     // per phase: what its last iteration read
  std::vector<OwnerMap> maps_;                                         // per tile position, between phases
  std::vector<std::vector<std::vector<std::vector<uint8_t>>>> slots_;  // tile, phase, checksum
};

}  // namespace

std::vector<arch::Expectation> prove_payload(const std::vector<const arch::CapturePhase*>& phases,
                                             const std::vector<ProofTile>& tiles, uint64_t token_seed,
                                             const ProofProgress& progress) {
  return Prover(phases, tiles, token_seed).run(progress);
}

}  // namespace lockstep::compiler
