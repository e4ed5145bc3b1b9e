// The phase-aware roofline (see roofline.hpp).
#include "roofline/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace kiln::roofline {

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBf16Tensor:
      return "bf16-tensor";
    case Precision::kFp16Tensor:
      return "fp16-tensor";
    case Precision::kFp8Tensor:
      return "fp8-tensor";
    case Precision::kTf32Tensor:
      return "tf32-tensor";
    case Precision::kFp32:
      return "fp32";
  }
  return "?";
}

std::string resource_name(Resource resource) {
  switch (resource) {
    case Resource::kCompute:
      return "compute";
    case Resource::kMemory:
      return "memory";
    case Resource::kInterconnect:
      return "interconnect";
  }
  return "?";
}

Ceilings ceilings_from_profile(const core::HardwareProfile& p) {
  Ceilings c;
  c.flops_per_second[static_cast<int>(Precision::kBf16Tensor)] = p.bf16_tensor_tflops * 1e12;
  c.flops_per_second[static_cast<int>(Precision::kFp16Tensor)] = p.fp16_tensor_tflops * 1e12;
  c.flops_per_second[static_cast<int>(Precision::kFp8Tensor)] = p.fp8_tensor_tflops * 1e12;
  c.flops_per_second[static_cast<int>(Precision::kTf32Tensor)] = p.tf32_tensor_tflops * 1e12;
  c.flops_per_second[static_cast<int>(Precision::kFp32)] = p.fp32_tflops * 1e12;
  c.hbm_bytes_per_second = p.hbm_gbps * 1e9;
  c.comm_bytes_per_second = p.interconnect_gbps_per_direction * 1e9;
  c.source = "spec: " + p.display_name;
  return c;
}

RooflineResult evaluate(const CostModel& model, const Ceilings& ceilings) {
  RooflineResult result;
  double by_resource[3] = {0.0, 0.0, 0.0};
  for (const Phase& phase : model.phases) {
    PhaseTime t;
    t.name = phase.name;
    for (const Stage& s : phase.stages) {
      if (s.flops < 0 || s.hbm_bytes < 0 || s.comm_bytes < 0) {
        throw Error(fmt::format("roofline: stage '{}' of phase '{}' has a negative quantity",
                                s.name, phase.name));
      }
      if (s.flops > 0) {
        const double peak = ceilings.peak(s.precision);
        if (peak <= 0) {
          throw Error(
              fmt::format("roofline: stage '{}' computes at {} but the ceilings ({}) have "
                          "no such rate",
                          s.name, precision_name(s.precision), ceilings.source));
        }
        t.compute_seconds += s.flops / peak;
      }
      t.memory_seconds += s.hbm_bytes;
      t.interconnect_seconds += s.comm_bytes;
    }
    const auto rate = [&](double bytes, double per_second, const char* what) {
      if (bytes > 0 && per_second <= 0) {
        throw Error(
            fmt::format("roofline: phase '{}' moves {} bytes but the ceilings ({}) have "
                        "no {} bandwidth",
                        phase.name, bytes, ceilings.source, what));
      }
      return bytes > 0 ? bytes / per_second : 0.0;
    };
    t.memory_seconds = rate(t.memory_seconds, ceilings.hbm_bytes_per_second, "memory");
    t.interconnect_seconds =
        rate(t.interconnect_seconds, ceilings.comm_bytes_per_second, "interconnect");
    t.seconds = std::max({t.compute_seconds, t.memory_seconds, t.interconnect_seconds});
    t.binding = t.seconds == t.compute_seconds && t.compute_seconds > 0 ? Resource::kCompute
                : t.seconds == t.interconnect_seconds && t.interconnect_seconds > 0
                    ? Resource::kInterconnect
                    : Resource::kMemory;
    by_resource[static_cast<int>(t.binding)] += t.seconds;
    result.seconds += t.seconds;
    result.phases.push_back(t);
  }
  result.binding = static_cast<Resource>(
      std::max_element(std::begin(by_resource), std::end(by_resource)) - std::begin(by_resource));
  return result;
}

double utilization(double roof_seconds, double measured_seconds) {
  if (measured_seconds <= 0) return 0.0;
  return std::min(1.0, roof_seconds / measured_seconds);
}

}  // namespace kiln::roofline
