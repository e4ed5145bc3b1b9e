// Hardware profiles: the spec-sheet ceilings of the GPUs kiln targets. Measured ceilings from
// `kiln probe` live beside them (probe_cache.hpp) and take precedence where present.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::core {

struct HardwareProfile {
  std::string key;           // short name used on the command line, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 SXM5 80GB"
  std::vector<std::string> device_name_patterns;  // substrings of cudaDeviceProp::name, lower case
  int sm_count = 0;
  double memory_gib = 0.0;
  // Dense tensor-core rates with fp32 accumulate (no sparsity), TFLOP/s.
  double bf16_tensor_tflops = 0.0;
  double fp16_tensor_tflops = 0.0;
  double tf32_tensor_tflops = 0.0;
  double fp8_tensor_tflops = 0.0;                // 0: not supported
  double fp32_tflops = 0.0;                      // non-tensor FMA rate
  double hbm_gbps = 0.0;                         // device memory bandwidth, GB/s (1e9 B/s)
  std::string interconnect;                      // "NVLink 4 (18 links)", "PCIe 4.0 x16"
  double interconnect_gbps_per_direction = 0.0;  // per GPU, one direction, GB/s
  double pcie_gbps_per_direction = 0.0;
  std::string source;  // where the figures come from
};

const std::vector<HardwareProfile>& hardware_profiles();

// By key or display name, case-insensitive ("h100-sxm", "H200 SXM"). Throws kiln::UsageError
// naming the known keys when nothing matches.
const HardwareProfile& find_profile(const std::string& name);

// The profile whose pattern matches a CUDA device name ("NVIDIA H100 80GB HBM3"), if any.
std::optional<HardwareProfile> profile_for_device_name(const std::string& device_name);

}  // namespace kiln::core
