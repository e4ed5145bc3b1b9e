// Which algorithm NvlinkCollectives::all_reduce takes for AllReduceAlgorithm::kAuto, as a pure
// function of the call and what the object reserved (tested on the CPU).
#pragma once

#include <cstddef>

#include "core/dtype.hpp"

namespace kiln::comm {

enum class AllReduceAlgorithm;

struct AllReduceReservations {
  std::size_t lamport_capacity = 0;  // bytes per slot; 0: not reserved
  bool two_shot = false;             // the staging buffer is mapped
};

// Lamport (flag-in-data push) for bf16/fp16 messages of at most min(capacity, 1 MiB) that are
// whole 16-byte vectors; else two-shot from three ranks and 1 MiB up when its staging is mapped;
// else one-shot. 4xH200, 2026-11-27: two-shot 19.4 against one-shot 22.9 us at 1 MiB and 92.9
// against 171.4 us at 16 MiB (4 ranks); one-shot 13.2 against 16.9 us at 256 KiB; at two ranks
// both move the same bytes and one-shot was as fast or faster. Lamport is not yet measured.
AllReduceAlgorithm choose_all_reduce(int world, std::size_t bytes, core::DType dtype,
                                     const AllReduceReservations& reserved);

// Messages up to this take the Lamport algorithm where it is reserved.
constexpr std::size_t kLamportUpToBytes = std::size_t{1} << 20;
// From this on (and three ranks) two-shot.
constexpr std::size_t kTwoShotFromBytes = std::size_t{1} << 20;

}  // namespace kiln::comm
