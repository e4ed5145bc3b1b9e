// NCCL communicators limited to the SMs a capped GEMM leaves free, so that every CTA of a wave
// group's collective is resident while the GEMM runs. (Measured on 2xH200 with an unlimited NCCL:
// a group's ReduceScatter started at once but ended only near the GEMM's end, its CTAs waiting for
// SMs; docs/results/2026-11-23-overlap/.)
#pragma once

#include <nccl.h>

#include <map>
#include <memory>

#include "comm/communicator.hpp"
#include "overlap/gemm_shape.hpp"
#include "overlap/plan.hpp"

namespace kiln::overlap {

class LimitedCommunicator {
 public:
  LimitedCommunicator(comm::Communicator& parent, int max_ctas);
  ~LimitedCommunicator();
  LimitedCommunicator(const LimitedCommunicator&) = delete;
  LimitedCommunicator& operator=(const LimitedCommunicator&) = delete;
  ncclComm_t get() const { return comm_; }
  int max_ctas() const { return max_ctas_; }

 private:
  ncclComm_t comm_ = nullptr;
  int max_ctas_ = 0;
};

// The CTAs NCCL may use beside the GEMM of `plan` launched as `launch` on a device of
// `device_sms`: the SMs its CTA cap leaves free; 0 for copy-engine plans and uncapped GEMMs (NCCL
// then takes its default).
int collective_ctas_for(const Plan& plan, const LaunchGeometry& launch, int device_sms);

// Limited communicators made on first use and shared after, one per CTA limit: a split per plan
// would cost more than a sweep of plans that leave the same SMs free.
class LimitedCommunicatorPool {
 public:
  explicit LimitedCommunicatorPool(comm::Communicator& parent) : parent_(parent) {}
  // The communicator limited to `max_ctas` CTAs (collective over the parent on first use);
  // nullptr when `max_ctas` < 1.
  LimitedCommunicator* get(int max_ctas);

 private:
  comm::Communicator& parent_;
  std::map<int, std::unique_ptr<LimitedCommunicator>> by_ctas_;
};

}  // namespace kiln::overlap
