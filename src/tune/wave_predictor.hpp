// The wave-group predictor (issue 4): given a GEMM of T waves and a sampled latency curve of the
// collective the runtime calls, predict the latency of a partition of the waves into groups and
// pick the best one without running it. FlashOverlap's model (Hong et al., EuroSys'26): group i's
// compute ends after duration/T x (waves so far); its communication starts at max(end of its
// compute, end of the previous communication) and takes the curve's latency for its bytes (for an
// uneven All-to-All, the largest rank's bytes). Host arithmetic only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "overlap/gemm_shape.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::LaunchGeometry;

// Latency of one collective call against its message size (bytes per rank), sampled. Between
// samples: linear. Below the smallest: the smallest sample's latency (the fixed cost does not
// shrink). Above the largest: the last segment's slope continued (the bandwidth regime).
class LatencyCurve {
 public:
  LatencyCurve() = default;
  // Samples sorted by bytes here; at least one; bytes > 0, seconds > 0 and one sample per size
  // (throws kiln::UsageError naming the bad sample).
  LatencyCurve(std::vector<double> bytes, std::vector<double> seconds);
  double seconds_at(double bytes) const;
  const std::vector<double>& bytes() const { return bytes_; }
  const std::vector<double>& seconds() const { return seconds_; }
  bool empty() const { return bytes_.empty(); }

 private:
  std::vector<double> bytes_, seconds_;
};

// What the predictor needs of the GEMM: its duration while the collective runs beside it (SM and
// memory contention included) and the bytes each wave's tiles hand to the collective.
struct WaveProfile {
  double gemm_seconds = 0.0;       // whole GEMM, with the concurrent collective
  std::vector<double> wave_bytes;  // [T] bytes per rank each wave produces (the largest rank's)
  // The collective's latency beside the GEMM over its latency alone (the curve's): SM and memory
  // contention slow it down, NCCL's kernels most (measured per base plan by `kiln tune profile`).
  double comm_scale = 1.0;
  // A fixed cost every group's communication pays on top of the curve beside the GEMM: on 4xH200
  // AllReduce 4-55 us a copy-engine group (copies to 3 peers, 3 flags for the reorder) and ~50-100
  // us an NCCL call on 8 SMs, ~0 at 2 ranks (docs/results/2026-11-27-h200-x4/per_group_fit.py).
  double group_seconds = 0.0;
  int waves() const { return static_cast<int>(wave_bytes.size()); }
};

// The bytes each wave hands to its group's collective, as the runtime sends them: the wave's slots
// (grid_ctas of them; the last wave what is left, padding included) x tile elements x element
// size. For a ReduceScatter or AllReduce every rank's waves are alike.
std::vector<double> wave_bytes(const LaunchGeometry& launch, std::int64_t tile_elements,
                               std::size_t element_size);

// Pruning of the candidate partitions: the first group at most `first` waves (communication
// starts early), the last at most `last` (little is left exposed after the GEMM).
struct PartitionLimits {
  int first = 2;
  int last = 4;
};

struct GroupPrediction {
  int waves = 0;
  double bytes = 0.0;
  double compute_done = 0.0, comm_start = 0.0, comm_done = 0.0;  // seconds from the GEMM's start
};

struct Prediction {
  std::vector<int> partition;  // waves per group
  double seconds = 0.0;        // the last group's communication done
  std::vector<GroupPrediction> groups;
};

// The predicted timeline of one partition (it must sum to the profile's waves: UsageError
// otherwise).
Prediction predict(const WaveProfile& profile, const LatencyCurve& curve,
                   const std::vector<int>& partition);

// Every partition of `waves` waves allowed by `limits`, in lexicographic order (for the
// exhaustive mode and the tests; 2^(T-1) before pruning, so keep T small).
std::vector<std::vector<int>> candidate_partitions(int waves, const PartitionLimits& limits);
// Their number in closed form, without enumerating.
std::uint64_t candidate_count(int waves, const PartitionLimits& limits);

// The predicted-fastest allowed partition, by dynamic programming over the waves: for a prefix of
// w waves the compute end is fixed and the future depends on the prefix only through its last
// communication end (monotonically), so the earliest end per prefix is all the search keeps.
// O(T^2); equal to the exhaustive minimum of predict() (tests check it).
Prediction best_partition(const WaveProfile& profile, const LatencyCurve& curve,
                          const PartitionLimits& limits);

// The same by evaluating every candidate (validation mode).
Prediction best_partition_exhaustive(const WaveProfile& profile, const LatencyCurve& curve,
                                     const PartitionLimits& limits);

}  // namespace kiln::tune
