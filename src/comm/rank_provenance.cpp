// Provenance of a multi-rank result (see rank_provenance.hpp).
#include "comm/rank_provenance.hpp"

namespace kiln::comm {

void add_rank_provenance(core::Provenance& provenance, const Communicator& comm,
                         const std::vector<std::string>& devices) {
  provenance.world_size = comm.size();
  provenance.ranks_per_gpu = comm.info().ranks_per_gpu;
  core::add_device_provenance(provenance, comm.device());
  if (!devices.empty()) provenance.devices = devices;
  provenance.libraries["nccl"] = nccl_version();
}

}  // namespace kiln::comm
