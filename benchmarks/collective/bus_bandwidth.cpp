#include "benchmarks/collective/bus_bandwidth.hpp"

namespace kiln::benchmarks {

double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

}  // namespace kiln::benchmarks
