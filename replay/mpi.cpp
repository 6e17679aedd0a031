#include "replay/mpi.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace lockstep::replay {
namespace {

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

void append(std::string& out, const void* data, size_t size) { out.append(static_cast<const char*>(data), size); }

// One rank's items as bytes: status, message, count, then (index, size, bytes) each.
std::string pack(const std::vector<std::pair<size_t, std::string>>& items, int status, const std::string& message) {
  std::string out;
  const int32_t s = status;
  const uint64_t message_size = message.size(), count = items.size();
  append(out, &s, sizeof s);
  append(out, &message_size, sizeof message_size);
  out += message;
  append(out, &count, sizeof count);
  for (const auto& [index, bytes] : items) {
    const uint64_t i = index, n = bytes.size();
    append(out, &i, sizeof i);
    append(out, &n, sizeof n);
    out += bytes;
  }
  return out;
}

struct Cursor {
  const char* p;
  const char* end;
  template <typename T>
  T get() {
    if (size_t(end - p) < sizeof(T)) throw std::runtime_error("MPI gather: truncated");
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
  std::string bytes(uint64_t n) {
    if (uint64_t(end - p) < n) throw std::runtime_error("MPI gather: truncated");
    std::string s(p, n);
    p += n;
    return s;
  }
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::atoi(v);
}

}  // namespace

bool MpiSession::launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

MpiSession::MpiSession() {
  if (!launched_by_mpirun()) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  active_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  local_size_ = std::max(1, env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
}

MpiSession::~MpiSession() {
  if (!active_) return;
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

MpiSession::Gathered MpiSession::gather(const std::vector<std::pair<size_t, std::string>>& items, int status,
                                        const std::string& message) const {
  Gathered out;
  if (!active_ || size_ == 1) {
    out.items = items;
    out.worst_status = status;
    out.message = message;
    return out;
  }
  const std::string mine = pack(items, status, message);
  if (mine.size() > size_t(INT32_MAX)) throw std::runtime_error("MPI gather: rank results over 2 GiB");
  int my_size = static_cast<int>(mine.size());
  std::vector<int> sizes(root() ? size_ : 0);
  check(MPI_Gather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets;
  std::string all;
  if (root()) {
    int64_t total = 0;
    for (int s : sizes) {
      offsets.push_back(static_cast<int>(total));
      total += s;
    }
    if (total > INT32_MAX) throw std::runtime_error("MPI gather: results over 2 GiB");
    all.resize(static_cast<size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  if (!root()) return out;
  for (int r = 0; r < size_; ++r) {
    Cursor c{all.data() + offsets[r], all.data() + offsets[r] + sizes[r]};
    const int32_t s = c.get<int32_t>();
    const std::string m = c.bytes(c.get<uint64_t>());
    if (s > out.worst_status) {
      out.worst_status = s;
      out.message = m;
    }
    const auto count = c.get<uint64_t>();
    for (uint64_t i = 0; i < count; ++i) {
      const auto index = c.get<uint64_t>();
      out.items.emplace_back(index, c.bytes(c.get<uint64_t>()));
    }
  }
  return out;
}

int MpiSession::broadcast(int value) const {
  if (!active_ || size_ == 1) return value;
  check(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return value;
}

std::vector<uint64_t> MpiSession::broadcast(std::vector<uint64_t> values) const {
  if (!active_ || size_ == 1) return values;
  uint64_t count = values.size();
  check(MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  values.resize(count);
  if (count > 0) {
    check(MPI_Bcast(values.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  }
  return values;
}

std::vector<size_t> rank_share(size_t count, int rank, int size) {
  std::vector<size_t> out;
  for (size_t i = static_cast<size_t>(rank); i < count; i += static_cast<size_t>(size)) {
    out.push_back(i);
  }
  return out;
}

}  // namespace lockstep::replay
