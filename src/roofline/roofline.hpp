// The phase-aware roofline (ParallelKernelBench's model): a problem runs in phases, each made of
// stages that do FLOPs at some precision, move HBM bytes and move bytes over the interconnect.
// A phase cannot finish before its busiest resource does:
//   T_phase = max(sum FLOPs / P_peak(precision), sum HBM bytes / B_mem, sum comm bytes / B_comm)
//   T_roof  = sum over phases of T_phase,   U = min(1, T_roof / T_measured).
// Host arithmetic only; the ceilings come from a hardware profile or from `kiln probe`.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/hardware_profile.hpp"

namespace kiln::roofline {

// The rate class a stage's FLOPs run at: tensor-core matrix math per input type, or CUDA-core
// fp32 arithmetic (element-wise work, reductions, fp32 convolutions).
enum class Precision { kBf16Tensor, kFp16Tensor, kFp8Tensor, kTf32Tensor, kFp32 };
inline constexpr int kPrecisions = 5;
std::string precision_name(Precision precision);  // "bf16-tensor", ..., "fp32"

enum class Resource { kCompute, kMemory, kInterconnect };
std::string resource_name(Resource resource);  // "compute", "memory", "interconnect"

struct Stage {
  std::string name;
  double flops = 0.0;
  Precision precision = Precision::kFp32;
  double hbm_bytes = 0.0;   // bytes read + written in device memory, per GPU
  double comm_bytes = 0.0;  // bytes over one GPU's links in one direction (bus volume)
};

struct Phase {
  std::string name;
  std::vector<Stage> stages;
};

struct CostModel {
  std::vector<Phase> phases;
};

// Peak rates, per GPU.
struct Ceilings {
  std::array<double, kPrecisions> flops_per_second{};  // by Precision
  double hbm_bytes_per_second = 0.0;
  double comm_bytes_per_second = 0.0;  // per direction
  std::string source;                  // "spec: NVIDIA H100 SXM5 80GB", "probe: ..."
  double peak(Precision precision) const { return flops_per_second[static_cast<int>(precision)]; }
};

// Spec-sheet ceilings of a profile (dense tensor rates, HBM, interconnect per direction).
Ceilings ceilings_from_profile(const core::HardwareProfile& profile);

struct PhaseTime {
  std::string name;
  double compute_seconds = 0.0, memory_seconds = 0.0, interconnect_seconds = 0.0;
  double seconds = 0.0;  // the max of the three
  Resource binding = Resource::kMemory;
};

struct RooflineResult {
  std::vector<PhaseTime> phases;
  double seconds = 0.0;                  // T_roof
  Resource binding = Resource::kMemory;  // the resource binding the phases that take the most time
};

// Throws kiln::Error when a stage needs a ceiling that is zero (e.g. fp8 on a GPU without it)
// or has a negative quantity.
RooflineResult evaluate(const CostModel& model, const Ceilings& ceilings);

// U = min(1, T_roof / T); 0 when T <= 0.
double utilization(double roof_seconds, double measured_seconds);

}  // namespace kiln::roofline
