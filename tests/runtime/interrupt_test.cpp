// Ctrl-C handling: a SIGINT delivered twice at once (a terminal's Ctrl-C reaching torchrun and its
// workers, then forwarded again by torchrun) is one graceful interrupt; a later second one exits.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <torchfit/runtime/interrupt.h>

namespace torchfit::runtime {

TEST(Interrupt, TwoSigintsAtOnceAreOneGracefulInterrupt) {
  install_interrupt_handler();
  clear_interrupt();
  ASSERT_FALSE(interrupt_requested());
  std::raise(SIGINT);
  std::raise(SIGINT);  // within the window: the same interrupt, the process goes on
  EXPECT_TRUE(interrupt_requested());
  clear_interrupt();
  EXPECT_FALSE(interrupt_requested());
}

TEST(InterruptDeathTest, ASecondSigintAfterTheWindowExitsAt130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_interrupt_handler();
        clear_interrupt();
        std::raise(SIGINT);
        std::this_thread::sleep_for(std::chrono::milliseconds(kSameInterruptWindowMs + 200));
        std::raise(SIGINT);
        std::exit(0);  // not reached when the second interrupt exits
      },
      ::testing::ExitedWithCode(130), "Second interrupt: exiting now");
}

}  // namespace torchfit::runtime
