// The plan an overlap call runs when it is given none (issue 4): the tuner's lookup
// (plan_lookup.hpp) for this GPU's hardware key, the world size, the operation, dtype and shape —
// the plan cache's entry, else a prediction from the saved or built-in profile, else the nearest
// tuned neighbour, else kiln's default. The lookup's groups were computed for the profile's SM
// count; where they do not fit this device's launch (another SM count, e.g. a partitioned GPU),
// the plan keeps its base and runs one group per wave, and the source says so.
#pragma once

#include <string>

#include "core/dtype.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/plan_lookup.hpp"

namespace kiln::overlap {

// The lookup key of the current CUDA device: its hardware-profile key ("h200-sxm"), else its name.
PlanKey current_plan_key(OverlapOp op, const GemmShape& shape, core::DType dtype, int world);

// Looks up the plan for the current device (see above). Throws kiln::UsageError when a cache or
// profile file exists but cannot be parsed (naming the file).
PlanLookup automatic_plan(OverlapOp op, const GemmShape& shape, core::DType dtype, int world,
                          const PlanLookupOptions& options = {});

}  // namespace kiln::overlap
