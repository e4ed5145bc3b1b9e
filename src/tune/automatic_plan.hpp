// The one entrance for "the plan an overlap call runs when it is given none": the tuner's lookup
// (plan_lookup.hpp) for this GPU's hardware key, the world size, the operation, dtype and shape —
// the plan cache's entry, else a prediction from the saved or built-in profile, else the nearest
// tuned neighbour, else kiln's default. Rank 0 looks it up and broadcasts it: ranks whose cache or
// profile files differ would otherwise run different groups and wait on each other forever.
// The lookup's groups were computed for the profile's SM count; where they do not fit this
// device's launch (another SM count, e.g. a partitioned GPU), the plan keeps its base and runs
// one group per wave, and the source says so. The runtime (overlap/) only ever receives the Plan.
#pragma once

#include "comm/communicator.hpp"
#include "core/dtype.hpp"
#include "overlap/gemm_collective.hpp"
#include "tune/plan_lookup.hpp"

namespace kiln::tune {

// The lookup key of the current CUDA device: its hardware-profile key ("h200-sxm"), else its name.
PlanKey current_plan_key(overlap::OverlapOp op, const overlap::GemmShape& shape, core::DType dtype,
                         int world);

// Rank 0's lookup for its device, broadcast to every rank of `comm` (collective over `comm`).
// Throws kiln::UsageError for a non-positive shape, or when a cache or profile file exists but
// cannot be parsed (naming the file). When rank 0's lookup throws, rank 0 broadcasts the error
// instead of a plan, and every rank throws it: a UsageError stays one, anything else becomes
// kiln::Error ("automatic plan: rank 0's lookup failed: ..."), so no rank is left waiting.
PlanLookup automatic_plan(comm::Communicator& comm, overlap::OverlapOp op,
                          const overlap::GemmShape& shape, core::DType dtype,
                          const PlanLookupOptions& options = {});

}  // namespace kiln::tune
