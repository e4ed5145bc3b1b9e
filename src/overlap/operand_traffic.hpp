// How many operand bytes a persistent GEMM's tile order reads from DRAM, modelled on the host
// (issue 17). Under the chip's power cap a kernel's clock falls with the energy it spends, and at
// long K the operand panels a wave of CTAs touches do not fit in the L2: then the order decides
// how often each panel comes from DRAM. On one H200 at 4096x8192x8192 (ping-pong 128x144 2x1) the
// static order raster m read 1105 MB, a serpentine band of 16 865 MB, cuBLAS's 256x128 kernel 638
// MB; at the baseline's cycles kiln's kernel ran at a 5% lower SM clock with the first and 2% with
// the second (docs/results/2026-12-03e-kblock-trace/). The model: the tiles of each wave (the
// grid's CTAs' consecutive slots, as the scheduler hands them out) read the A row panels and B
// column panels they touch once; a panel the previous wave also touched is free if that wave's
// panels fit in half the L2 (the rest of the L2 holds the output and the other partition's copies).
#pragma once

#include <cstddef>

#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

// Modelled DRAM bytes of A and B for `shape` under `config` and `schedule` on `device_sms` SMs
// with `l2_bytes` of L2; operands of `element_bytes` each. Throws kiln::UsageError for a
// non-positive shape, SM count, element size or L2 size.
double modeled_operand_bytes(const GemmShape& shape, const GemmConfig& config,
                             const ScheduleOptions& schedule, int device_sms,
                             std::size_t element_bytes, std::size_t l2_bytes);

// The claimed-tile band order (scheduler=claimed or serpentine, raster m or n, band 1..32) of
// `schedule` (its cap kept) with the least modelled operand traffic, and that traffic; ties keep
// the first found (claimed before serpentine, raster n before m, narrower bands first).
struct LeastTrafficOrder {
  ScheduleOptions schedule;
  double bytes = 0;
};
LeastTrafficOrder least_traffic_band_order(const GemmShape& shape, const GemmConfig& config,
                                           const ScheduleOptions& schedule, int device_sms,
                                           std::size_t element_bytes, std::size_t l2_bytes);

}  // namespace kiln::overlap
