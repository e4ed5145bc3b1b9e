// kAuto's choice (see all_reduce_choice.hpp).
#include "comm/all_reduce_choice.hpp"

#include "comm/nvlink_collectives.hpp"

namespace kiln::comm {

AllReduceAlgorithm choose_all_reduce(int world, std::size_t bytes, core::DType dtype,
                                     const AllReduceReservations& reserved) {
  const bool half = dtype == core::DType::kBf16 || dtype == core::DType::kFp16;
  if (half && bytes > 0 && bytes % 16 == 0 && reserved.lamport_capacity > 0 &&
      bytes <= reserved.lamport_capacity && bytes <= kLamportUpToBytes)
    return AllReduceAlgorithm::kLamport;
  if (reserved.two_shot && world >= 3 && bytes >= kTwoShotFromBytes)
    return AllReduceAlgorithm::kTwoShot;
  return AllReduceAlgorithm::kOneShot;
}

}  // namespace kiln::comm
