// Turns taken in the order they were asked for (a ticket lock): the holder of an InTurn object
// runs alone among the threads of one FifoTurns. std::mutex promises no order: with eight
// searches of `kiln evolve set` waiting on one GPU, a search whose thread keeps losing the race
// can wait through many of the others' judgements in a row, and the set's last problems then run
// long after the rest. (H200, 2026-11-29: late generations of one problem took 30-65 s while its
// own judging was under a second a batch; how much of that was order is not measured.)
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kiln::core {

class FifoTurns {
 public:
  class InTurn {
   public:
    explicit InTurn(FifoTurns& turns);
    ~InTurn();
    InTurn(const InTurn&) = delete;
    InTurn& operator=(const InTurn&) = delete;

   private:
    FifoTurns& turns_;
  };

  // Turns asked for so far (held, waiting or done).
  std::uint64_t asked();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t next_ticket_ = 0;  // the ticket the next asker gets
  std::uint64_t serving_ = 0;      // the ticket whose turn it is
};

}  // namespace kiln::core
