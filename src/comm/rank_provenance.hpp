// What a multi-rank result's provenance takes from the communicator, written once for every
// benchmark: world size, ranks per GPU, the device, NCCL's version.
#pragma once

#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/provenance.hpp"

namespace kiln::comm {

// `devices` (one entry per rank, e.g. "NVIDIA H200 [0000:18:00.0]") replaces the device list
// when given; else this rank's device is listed.
void add_rank_provenance(core::Provenance& provenance, const Communicator& comm,
                         const std::vector<std::string>& devices = {});

}  // namespace kiln::comm
