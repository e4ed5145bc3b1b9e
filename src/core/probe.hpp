// `kiln probe`: measured ceilings of the GPUs present — device-to-device copy bandwidth, the bf16
// GEMM rate through cuBLAS, and per-pair peer-to-peer bandwidth — cached as JSON so that rooflines
// can use measured rather than spec-sheet peaks.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "core/event_timer.hpp"
#include "core/stats.hpp"

namespace kiln::core {

struct ProbeOptions {
  std::uint64_t copy_bytes = 1ull << 30;  // per copy; far beyond L2
  int gemm_size = 8192;                   // M = N = K
  std::uint64_t p2p_bytes = 256ull << 20;
  int warmup = 3;
  int iterations = 20;
};

struct DeviceProbe {
  int device = 0;
  std::string name;
  std::string uuid;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t memory_bytes = 0;
  TimingStats copy_ms;
  double copy_gbps = 0.0;  // bytes read + bytes written per second, from the median
  TimingStats gemm_ms;
  double gemm_bf16_tflops = 0.0;
};

struct PeerProbe {
  int source = 0;
  int destination = 0;
  bool peer_access = false;
  TimingStats copy_ms;
  double gbps = 0.0;  // one direction
};

struct ProbeResult {
  std::vector<DeviceProbe> devices;
  std::vector<PeerProbe> peers;
};

// The one copy-bandwidth measurement (kiln probe, the reduction bench's ceiling): `bytes` copied
// device to device on `stream` (random source), per-copy times in milliseconds; and the rate it
// gives, counting bytes read plus bytes written, from the median.
TimingStats time_copy(cudaStream_t stream, std::size_t bytes, const TimingOptions& timing);
double copy_gbps(std::size_t bytes, const TimingStats& copy_ms);

// Measures every visible device, then every ordered pair. `progress` gets one line per step.
ProbeResult run_probe(const ProbeOptions& options,
                      const std::function<void(const std::string&)>& progress);

nlohmann::json to_json(const ProbeResult& result);

// Cache location: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln; file
// probe.json.
std::string default_probe_cache_path();
void save_probe_cache(const std::string& path, const nlohmann::json& probe_with_provenance);
std::optional<nlohmann::json> load_probe_cache(const std::string& path);

}  // namespace kiln::core
