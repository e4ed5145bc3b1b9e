#include "tune/wave_predictor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace kiln::tune {

LatencyCurve::LatencyCurve(std::vector<double> bytes, std::vector<double> seconds) {
  if (bytes.empty() || bytes.size() != seconds.size()) {
    throw UsageError(fmt::format("latency curve: {} sizes and {} latencies; need one or more pairs",
                                 bytes.size(), seconds.size()));
  }
  std::vector<std::size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return bytes[a] < bytes[b]; });
  for (std::size_t i : order) {
    if (!(bytes[i] > 0) || !(seconds[i] > 0)) {
      throw UsageError(fmt::format("latency curve: sample ({} bytes, {} s) must be positive",
                                   bytes[i], seconds[i]));
    }
    if (!bytes_.empty() && bytes[i] == bytes_.back()) {
      throw UsageError(fmt::format("latency curve: two samples at {} bytes", bytes[i]));
    }
    bytes_.push_back(bytes[i]);
    seconds_.push_back(seconds[i]);
  }
}

double LatencyCurve::seconds_at(double bytes) const {
  if (bytes_.empty()) throw Error("latency curve: no samples");
  if (bytes <= bytes_.front()) return seconds_.front();
  const std::size_t n = bytes_.size();
  if (n == 1) return seconds_.front() * bytes / bytes_.front();  // one sample: pure bandwidth
  // The segment that holds `bytes`, or the last one beyond the largest sample.
  std::size_t hi = std::upper_bound(bytes_.begin(), bytes_.end(), bytes) - bytes_.begin();
  hi = std::min(hi, n - 1);
  const std::size_t lo = hi - 1;
  const double slope = (seconds_[hi] - seconds_[lo]) / (bytes_[hi] - bytes_[lo]);
  return std::max(seconds_[lo] + slope * (bytes - bytes_[lo]), 0.0);
}

std::vector<double> wave_bytes(const LaunchGeometry& launch, std::int64_t tile_elements,
                               std::size_t element_size) {
  if (launch.grid_ctas < 1 || launch.slots < 1 || tile_elements < 1 || element_size < 1) {
    throw UsageError(
        fmt::format("wave bytes: grid {} CTAs, {} slots, {} tile elements, {} bytes "
                    "each; all must be >= 1",
                    launch.grid_ctas, launch.slots, tile_elements, element_size));
  }
  std::vector<double> bytes;
  for (int w = 0; w < launch.waves(); ++w) {
    const int slots = std::min(launch.grid_ctas, launch.slots - w * launch.grid_ctas);
    bytes.push_back(static_cast<double>(slots) * tile_elements * element_size);
  }
  return bytes;
}

Prediction predict(const WaveProfile& profile, const LatencyCurve& curve,
                   const std::vector<int>& partition) {
  const int waves = profile.waves();
  int total = 0;
  for (int g : partition) {
    if (g < 1) throw UsageError(fmt::format("partition: a group of {} waves", g));
    total += g;
  }
  if (total != waves) {
    throw UsageError(fmt::format("partition sums to {} waves; the GEMM has {}", total, waves));
  }
  const double per_wave = profile.gemm_seconds / waves;
  Prediction p;
  p.partition = partition;
  int done = 0;
  double comm_done = 0.0;
  for (int g : partition) {
    GroupPrediction group;
    group.waves = g;
    for (int w = done; w < done + g; ++w) group.bytes += profile.wave_bytes[w];
    done += g;
    group.compute_done = per_wave * done;
    group.comm_start = std::max(group.compute_done, comm_done);
    group.comm_done = group.comm_start + profile.comm_scale * curve.seconds_at(group.bytes) +
                      profile.group_seconds;
    comm_done = group.comm_done;
    p.groups.push_back(group);
  }
  p.seconds = comm_done;
  return p;
}

namespace {

void check_limits(int waves, const PartitionLimits& limits) {
  if (waves < 1) throw UsageError(fmt::format("wave count {}: must be >= 1", waves));
  if (limits.first < 1 || limits.last < 1) {
    throw UsageError(
        fmt::format("--max-first {} / --max-last {}: must be >= 1", limits.first, limits.last));
  }
}

void extend(int left, std::vector<int>& prefix, const PartitionLimits& limits,
            std::vector<std::vector<int>>& out) {
  if (left == 0) {
    if (prefix.back() <= limits.last) out.push_back(prefix);
    return;
  }
  const int most = prefix.empty() ? std::min(left, limits.first) : left;
  for (int g = 1; g <= most; ++g) {
    prefix.push_back(g);
    extend(left - g, prefix, limits, out);
    prefix.pop_back();
  }
}

}  // namespace

std::vector<std::vector<int>> candidate_partitions(int waves, const PartitionLimits& limits) {
  check_limits(waves, limits);
  if (waves > 30) {
    throw UsageError(
        fmt::format("exhaustive enumeration of {} waves: at most 30 (2^29 "
                    "partitions before pruning)",
                    waves));
  }
  std::vector<std::vector<int>> out;
  std::vector<int> prefix;
  extend(waves, prefix, limits, out);
  return out;
}

std::uint64_t candidate_count(int waves, const PartitionLimits& limits) {
  check_limits(waves, limits);
  // One group: allowed when it is short enough to be both first and last.
  std::uint64_t count = waves <= std::min(limits.first, limits.last) ? 1 : 0;
  // Two or more: first a, last b, any composition of the m = T - a - b waves between
  // (2^(m-1) of them for m >= 1, one empty middle for m = 0).
  for (int a = 1; a <= limits.first; ++a) {
    for (int b = 1; b <= limits.last; ++b) {
      const int m = waves - a - b;
      if (m < 0) continue;
      count += m == 0 ? 1 : (std::uint64_t{1} << (m - 1));
    }
  }
  return count;
}

Prediction best_partition(const WaveProfile& profile, const LatencyCurve& curve,
                          const PartitionLimits& limits) {
  const int waves = profile.waves();
  check_limits(waves, limits);
  const double per_wave = profile.gemm_seconds / waves;
  std::vector<double> prefix_bytes(waves + 1, 0.0);
  for (int w = 0; w < waves; ++w) prefix_bytes[w + 1] = prefix_bytes[w] + profile.wave_bytes[w];
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // end[w]: earliest last-communication end over partitions of the first w waves (w < T: into
  // groups that may be followed by more; the first group at most limits.first).
  std::vector<double> end(waves + 1, kNever);
  std::vector<int> last_group(waves + 1, 0);
  end[0] = 0.0;
  const auto relax = [&](int w, int g) {
    const int from = w - g;
    if (end[from] == kNever || (from == 0 && g > limits.first)) return kNever;
    const double start = std::max(per_wave * w, end[from]);
    return start + profile.comm_scale * curve.seconds_at(prefix_bytes[w] - prefix_bytes[from]) +
           profile.group_seconds;
  };
  for (int w = 1; w < waves; ++w) {
    for (int g = 1; g <= w; ++g) {
      const double t = relax(w, g);
      if (t < end[w]) {
        end[w] = t;
        last_group[w] = g;
      }
    }
  }
  for (int g = 1; g <= std::min(waves, limits.last); ++g) {
    const double t = relax(waves, g);
    if (t < end[waves]) {
      end[waves] = t;
      last_group[waves] = g;
    }
  }
  if (end[waves] == kNever) {
    throw UsageError(
        fmt::format("no partition of {} waves has a first group of at most {} and a "
                    "last of at most {} waves",
                    waves, limits.first, limits.last));
  }
  std::vector<int> partition;
  for (int w = waves; w > 0; w -= last_group[w]) partition.push_back(last_group[w]);
  std::reverse(partition.begin(), partition.end());
  return predict(profile, curve, partition);
}

Prediction best_partition_exhaustive(const WaveProfile& profile, const LatencyCurve& curve,
                                     const PartitionLimits& limits) {
  Prediction best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (const auto& partition : candidate_partitions(profile.waves(), limits)) {
    Prediction p = predict(profile, curve, partition);
    if (p.seconds < best.seconds) best = std::move(p);
  }
  if (best.partition.empty()) {
    throw UsageError(fmt::format("no partition of {} waves fits the limits", profile.waves()));
  }
  return best;
}

}  // namespace kiln::tune
