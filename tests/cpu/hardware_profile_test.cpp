#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/hardware_profile.hpp"

using kiln::core::find_profile;
using kiln::core::profile_for_device_name;

TEST(HardwareProfile, AllFiveTargetsWithSpecCeilings) {
  const auto& h100 = find_profile("h100-sxm");
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_DOUBLE_EQ(h100.bf16_tensor_tflops, 989.4);
  EXPECT_DOUBLE_EQ(h100.hbm_gbps, 3350);
  EXPECT_DOUBLE_EQ(h100.interconnect_gbps_per_direction, 450);
  EXPECT_DOUBLE_EQ(find_profile("h200-sxm").hbm_gbps, 4800);
  EXPECT_EQ(find_profile("a100-sxm").sm_count, 108);
  EXPECT_DOUBLE_EQ(find_profile("a800-sxm").interconnect_gbps_per_direction, 200);
  EXPECT_DOUBLE_EQ(find_profile("rtx4090").hbm_gbps, 1008);
  for (const auto& profile : kiln::core::hardware_profiles()) {
    EXPECT_GT(profile.bf16_tensor_tflops, profile.fp32_tflops) << profile.key;
    EXPECT_GT(profile.hbm_gbps, 0) << profile.key;
    EXPECT_FALSE(profile.source.empty()) << profile.key;
  }
}

TEST(HardwareProfile, LookupByShortFormAndDisplayName) {
  EXPECT_EQ(find_profile("H100").key, "h100-sxm");
  EXPECT_EQ(find_profile("NVIDIA H200 SXM 141GB").key, "h200-sxm");
  EXPECT_THROW(find_profile("z80"), kiln::UsageError);
  EXPECT_THROW(find_profile(""), kiln::UsageError);
}

TEST(HardwareProfile, MatchesCudaDeviceNames) {
  EXPECT_EQ(profile_for_device_name("NVIDIA H100 80GB HBM3")->key, "h100-sxm");
  EXPECT_EQ(profile_for_device_name("NVIDIA H200")->key, "h200-sxm");
  EXPECT_EQ(profile_for_device_name("NVIDIA A100-SXM4-80GB")->key, "a100-sxm");
  EXPECT_EQ(profile_for_device_name("NVIDIA A800-SXM4-80GB")->key, "a800-sxm");
  EXPECT_EQ(profile_for_device_name("NVIDIA GeForce RTX 4090")->key, "rtx4090");
  EXPECT_FALSE(profile_for_device_name("NVIDIA H100 PCIe").has_value());
  EXPECT_FALSE(profile_for_device_name("Tesla T4").has_value());
}
