// Rank 0's text on every rank (see broadcast_text.hpp).
#include "comm/broadcast_text.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"

namespace kiln::comm {

std::string broadcast_text(Communicator& comm, const std::string& text, const std::string& what,
                           std::size_t max_bytes) {
  if (comm.size() == 1) return text;
  std::vector<char> wire(max_bytes + 1, '\0');
  if (comm.rank() == 0) {
    if (text.size() > max_bytes || text.find('\0') != std::string::npos) {
      throw Error(
          fmt::format("{}: {} bytes of text cannot be shared with the other ranks (at "
                      "most {}, no NUL)",
                      what, text.size(), max_bytes));
    }
    std::memcpy(wire.data(), text.data(), text.size());
  }
  core::Stream stream;
  core::DeviceBuffer buffer(wire.size());
  KILN_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), wire.data(), wire.size(), cudaMemcpyHostToDevice,
                                  stream.get()));
  comm.call(what + " broadcast", [&] {
    return ncclBroadcast(buffer.data(), buffer.data(), wire.size(), ncclChar, 0, comm.get(),
                         stream.get());
  });
  comm.wait(stream.get(), what + " broadcast");
  KILN_CUDA_CHECK(cudaMemcpy(wire.data(), buffer.data(), wire.size(), cudaMemcpyDeviceToHost));
  wire.back() = '\0';
  return std::string(wire.data());
}

}  // namespace kiln::comm
