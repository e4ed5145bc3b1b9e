#include "core/fifo_turn.hpp"

namespace kiln::core {

FifoTurns::InTurn::InTurn(FifoTurns& turns) : turns_(turns) {
  std::unique_lock lock(turns_.mutex_);
  const std::uint64_t ticket = turns_.next_ticket_++;
  turns_.changed_.wait(lock, [&] { return turns_.serving_ == ticket; });
}

FifoTurns::InTurn::~InTurn() {
  {
    const std::lock_guard lock(turns_.mutex_);
    ++turns_.serving_;
  }
  turns_.changed_.notify_all();  // every waiter checks whether its ticket is next
}

std::uint64_t FifoTurns::asked() {
  const std::lock_guard lock(mutex_);
  return next_ticket_;
}

}  // namespace kiln::core
