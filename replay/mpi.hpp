#pragma once
// Scale-out across ranks: MPI is initialised only when the process was started by mpirun
// (OMPI_COMM_WORLD_SIZE is set), so a plain run never touches it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::replay {

class MpiSession {
 public:
  MpiSession();   // MPI_Init when launched by mpirun; a one-rank session otherwise
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  static bool launched_by_mpirun();
  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_size() const { return local_size_; }  // ranks on this machine
  bool root() const { return rank_ == 0; }

  // Every rank passes its (index, bytes) items; rank 0 gets all of them (in rank order),
  // the others an empty vector. `status` and `message` travel along so rank 0 learns of a
  // failure on another rank instead of waiting for it forever.
  struct Gathered {
    std::vector<std::pair<size_t, std::string>> items;
    int worst_status = 0;  // the largest status of any rank
    std::string message;   // the message of the first rank with that status
  };
  Gathered gather(const std::vector<std::pair<size_t, std::string>>& items, int status,
                  const std::string& message) const;

  // Rank 0's value, on every rank.
  int broadcast(int value) const;
  std::vector<uint64_t> broadcast(std::vector<uint64_t> values) const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
};

// The indices of `count` items rank `rank` of `size` takes: i % size == rank.
std::vector<size_t> rank_share(size_t count, int rank, int size);

}  // namespace lockstep::replay
