// The signaling GEMM as the overlap runtime sees it: C = A·op(B), bf16 or fp16 in, fp32
// accumulation, the same type out, written tile by tile to execution-order slots with one counter
// increment per tile on the tile's wave group (src/overlap/signaling_epilogue.cuh). The kernels are
// CUTLASS 3.x sm90 TMA warp-specialized persistent GEMMs (cooperative or ping-pong, the tiles and
// clusters of built_gemm_configs()); this header hides CUTLASS.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "core/dtype.hpp"
#include "overlap/gemm_shape.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

// Where the epilogue writes and whom it signals; device pointers owned by the caller.
struct EpilogueTargets {
  void* slots = nullptr;
  int* slot_of_tile = nullptr;
  unsigned* group_counters = nullptr;  // nullptr: no signal (the GEMM alone)
  const int* wave_group = nullptr;
  const int* group_first_slot = nullptr;
  const int* group_slot_count = nullptr;
  unsigned long long* slot_done_ns = nullptr;  // optional trace
  SlotGeometry geometry{};
  ColumnGroups column_groups{};  // geometry.contiguous_rows only: the tile-column groups
  bool deferred_signal = false;  // count each tile at the CTA's next epilogue (see the epilogue)
  unsigned debug_signal_delay_ns = 0;  // tests only: see SignalingEpilogueArguments
};

class SignalingGemm {
 public:
  virtual ~SignalingGemm() = default;
  virtual core::DType dtype() const = 0;
  virtual WeightLayout weight_layout() const = 0;
  virtual GemmConfig config() const = 0;
  TileShape tile() const { return config().tile; }
  // Throws kiln::UsageError when CUTLASS cannot run the shape (alignment: K and N multiples of 8).
  virtual LaunchGeometry geometry(const GemmShape& shape, const ScheduleOptions& schedule,
                                  int device_sms) const = 0;
  // Enqueues the GEMM. `targets.geometry` must come from geometry() for the same arguments.
  virtual void run(const GemmShape& shape, const void* a, const void* b,
                   const EpilogueTargets& targets, const ScheduleOptions& schedule, int device_sms,
                   cudaStream_t stream) = 0;
};

// Throws kiln::UsageError for a dtype or configuration kiln does not build (bf16/fp16;
// built_gemm_configs()). Constructing one touches no GPU.
std::unique_ptr<SignalingGemm> make_signaling_gemm(core::DType dtype, WeightLayout layout,
                                                   const GemmConfig& config);

}  // namespace kiln::overlap
