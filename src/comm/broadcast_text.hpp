// Rank 0's text on every rank: for decisions that rank 0 takes and every rank must share (a plan
// it looked up, a GEMM configuration it measured), so that the ranks run the same kernels.
#pragma once

#include <string>

#include "comm/communicator.hpp"

namespace kiln::comm {

// Collective over `comm`. Returns rank 0's `text` on every rank (the argument is ignored
// elsewhere). Throws kiln::Error naming `what` when the text is longer than `max_bytes` or has a
// NUL byte.
std::string broadcast_text(Communicator& comm, const std::string& text, const std::string& what,
                           std::size_t max_bytes = 4096);

}  // namespace kiln::comm
