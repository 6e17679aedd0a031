#pragma once
// SystemC has one global simulation kernel that cannot be elaborated again after
// sc_start. Each run takes the lock, gets a fresh context, and drops it afterwards.
#include <mutex>

namespace lockstep::sim {

class FreshSimulationContext {
 public:
  FreshSimulationContext();
  ~FreshSimulationContext();
  FreshSimulationContext(const FreshSimulationContext&) = delete;
  FreshSimulationContext& operator=(const FreshSimulationContext&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace lockstep::sim
