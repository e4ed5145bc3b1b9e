// core/fifo_turn: turns come in the order they were asked for, one at a time.
#include "core/fifo_turn.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kiln::core {
namespace {

TEST(FifoTurns, TurnsComeInTheOrderAsked) {
  FifoTurns turns;
  std::vector<int> order;
  std::mutex order_mutex;
  std::vector<std::thread> waiters;
  {
    const FifoTurns::InTurn first(turns);  // holds the turn while the others queue
    for (int i = 0; i < 6; ++i) {
      waiters.emplace_back([&, i] {
        const FifoTurns::InTurn turn(turns);
        const std::lock_guard lock(order_mutex);
        order.push_back(i);
      });
      // The next waiter asks only after this one is queued (it has taken a ticket and waits).
      while (turns.asked() < static_cast<std::uint64_t>(i) + 2) std::this_thread::yield();
    }
  }
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(FifoTurns, OneHolderAtATime) {
  FifoTurns turns;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const FifoTurns::InTurn turn(turns);
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --inside;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(most.load(), 1);
}

}  // namespace
}  // namespace kiln::core
