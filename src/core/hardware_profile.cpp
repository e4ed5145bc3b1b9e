#include "core/hardware_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace kiln::core {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::vector<HardwareProfile> make_profiles() {
  std::vector<HardwareProfile> profiles;
  {
    HardwareProfile p;
    p.key = "h100-sxm";
    p.display_name = "NVIDIA H100 SXM5 80GB";
    p.device_name_patterns = {"h100 80gb hbm3", "h100 sxm", "h100-sxm"};
    p.sm_count = 132;
    p.memory_gib = 80;
    p.bf16_tensor_tflops = 989.4;
    p.fp16_tensor_tflops = 989.4;
    p.tf32_tensor_tflops = 494.7;
    p.fp8_tensor_tflops = 1978.9;
    p.fp32_tflops = 66.9;
    p.hbm_gbps = 3350;
    p.interconnect = "NVLink 4 (18 links, 900 GB/s bidirectional)";
    p.interconnect_gbps_per_direction = 450;
    p.pcie_gbps_per_direction = 64;
    p.source = "NVIDIA H100 Tensor Core GPU datasheet (SXM5)";
    profiles.push_back(p);
  }
  {
    // Same GH100 chip and clocks as the H100 SXM; more and faster memory.
    HardwareProfile p = profiles.back();
    p.key = "h200-sxm";
    p.display_name = "NVIDIA H200 SXM 141GB";
    p.device_name_patterns = {"h200"};
    p.memory_gib = 141;
    p.hbm_gbps = 4800;
    p.source = "NVIDIA H200 Tensor Core GPU datasheet (SXM)";
    profiles.push_back(p);
  }
  {
    HardwareProfile p;
    p.key = "a100-sxm";
    p.display_name = "NVIDIA A100 SXM4 80GB";
    p.device_name_patterns = {"a100-sxm", "a100 sxm"};
    p.sm_count = 108;
    p.memory_gib = 80;
    p.bf16_tensor_tflops = 312;
    p.fp16_tensor_tflops = 312;
    p.tf32_tensor_tflops = 156;
    p.fp32_tflops = 19.5;
    p.hbm_gbps = 2039;
    p.interconnect = "NVLink 3 (12 links, 600 GB/s bidirectional)";
    p.interconnect_gbps_per_direction = 300;
    p.pcie_gbps_per_direction = 32;
    p.source = "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB)";
    profiles.push_back(p);
  }
  {
    // The export variant of the A100: same chip, NVLink cut to 8 links.
    HardwareProfile p = profiles.back();
    p.key = "a800-sxm";
    p.display_name = "NVIDIA A800 SXM4 80GB";
    p.device_name_patterns = {"a800-sxm", "a800 sxm"};
    p.interconnect = "NVLink 3 (8 links, 400 GB/s bidirectional)";
    p.interconnect_gbps_per_direction = 200;
    p.source = "NVIDIA A800 40GB/80GB product brief (SXM4); A100 compute rates";
    profiles.push_back(p);
  }
  {
    HardwareProfile p;
    p.key = "rtx4090";
    p.display_name = "NVIDIA GeForce RTX 4090";
    p.device_name_patterns = {"rtx 4090"};
    p.sm_count = 128;
    p.memory_gib = 24;
    p.bf16_tensor_tflops = 165.2;
    p.fp16_tensor_tflops = 165.2;
    p.tf32_tensor_tflops = 82.6;
    p.fp8_tensor_tflops = 330.3;
    p.fp32_tflops = 82.6;
    p.hbm_gbps = 1008;
    p.interconnect = "PCIe 4.0 x16 (no NVLink)";
    p.interconnect_gbps_per_direction = 32;
    p.pcie_gbps_per_direction = 32;
    p.source = "NVIDIA Ada Lovelace architecture whitepaper (fp32-accumulate tensor rates)";
    profiles.push_back(p);
  }
  return profiles;
}

}  // namespace

const std::vector<HardwareProfile>& hardware_profiles() {
  static const std::vector<HardwareProfile> kProfiles = make_profiles();
  return kProfiles;
}

const HardwareProfile& find_profile(const std::string& name) {
  const std::string wanted = lower(name);
  for (const HardwareProfile& profile : hardware_profiles()) {
    if (wanted == profile.key || wanted == lower(profile.display_name)) return profile;
  }
  // Short forms: "h100" -> "h100-sxm".
  for (const HardwareProfile& profile : hardware_profiles()) {
    if (profile.key.rfind(wanted, 0) == 0 && !wanted.empty()) return profile;
  }
  std::string keys;
  for (const HardwareProfile& profile : hardware_profiles()) {
    keys += (keys.empty() ? "" : ", ") + profile.key;
  }
  throw UsageError(fmt::format("unknown hardware profile '{}'; known: {}", name, keys));
}

std::optional<HardwareProfile> profile_for_device_name(const std::string& device_name) {
  const std::string name = lower(device_name);
  for (const HardwareProfile& profile : hardware_profiles()) {
    for (const std::string& pattern : profile.device_name_patterns) {
      if (name.find(pattern) != std::string::npos) return profile;
    }
  }
  return std::nullopt;
}

}  // namespace kiln::core
