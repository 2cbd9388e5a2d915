// Interrupt handling (Ctrl-C, SIGTERM, SIGHUP) and the exit clean-up of temporary files: a SIGINT delivered twice at
// once (a terminal's Ctrl-C reaching torchrun and its workers, then forwarded again by torchrun) is one graceful
// interrupt; a later second one exits.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <thread>

#include <torchfit/runtime/cleanup.h>
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
      ::testing::ExitedWithCode(130), "Second interrupt \\(SIGINT\\): exiting now");
}

// Issue 26: SIGTERM (a scheduler, `timeout`, torchrun) and SIGHUP (a closed ssh session) are handled like
// Ctrl-C: a graceful stop that remembers the signal, exit status 128 + its number.
TEST(Interrupt, SigtermAndSighupAskForTheGracefulStopAndAreNamed) {
  install_interrupt_handler();
  for (const int signo : {SIGTERM, SIGHUP, SIGINT}) {
    clear_interrupt();
    std::raise(signo);
    EXPECT_TRUE(interrupt_requested()) << signal_name(signo);
    EXPECT_EQ(interrupt_signal(), signo);
    EXPECT_EQ(interrupt_exit_status(), 128 + signo);
  }
  clear_interrupt();
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGHUP), "SIGHUP");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(interrupt_exit_status(), 130) << "no signal: Ctrl-C's status";
  std::signal(SIGTERM, SIG_DFL);  // the rest of the test binary keeps the default actions
  std::signal(SIGHUP, SIG_DFL);
}

namespace {
// A file named without the pid: a "threadsafe" death test re-runs the test in a new process, which must
// register the same path.
std::string make_file(const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / (name + std::to_string(::getuid()))).string();
  std::ofstream(path) << "partial";
  return path;
}
}  // namespace

// Issue 26 (item 8): a temporary of a write in progress is removed on every exit path that runs code.
TEST(InterruptDeathTest, ASecondSigtermExitsAt143AndRemovesTheTemporariesOfWritesInProgress) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string tmp = make_file("torchfit_sigterm_tmp_");
  EXPECT_EXIT(
      {
        const TemporaryFile registered(tmp);
        install_interrupt_handler();
        clear_interrupt();
        std::raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(kSameInterruptWindowMs + 200));
        std::raise(SIGTERM);
        std::exit(0);
      },
      ::testing::ExitedWithCode(143), "Second interrupt \\(SIGTERM\\): exiting now");
  EXPECT_FALSE(std::filesystem::exists(tmp)) << "the temporary outlived the immediate exit";
  std::filesystem::remove(tmp);
}

TEST(InterruptDeathTest, TemporariesAreRemovedOnExitTerminateAndADefaultSigterm) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Each file is made just before its own death test: the child of a later one re-runs the lines above it.
  const std::string at_exit = make_file("torchfit_exit_tmp_");
  EXPECT_EXIT(
      {
        install_exit_cleanup();
        new TemporaryFile(at_exit);  // a write in progress on another thread when exit() runs
        std::exit(3);
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_FALSE(std::filesystem::exists(at_exit)) << "exit()";
  const std::string at_terminate = make_file("torchfit_terminate_tmp_");
  EXPECT_DEATH(
      {
        install_exit_cleanup();
        new TemporaryFile(at_terminate);
        std::terminate();  // what an uncaught exception does
      },
      "");
  EXPECT_FALSE(std::filesystem::exists(at_terminate)) << "std::terminate";
  const std::string at_signal = make_file("torchfit_signal_tmp_");
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, SIG_DFL);
        install_exit_cleanup();  // the death test's child: SIGTERM's action is the default again
        new TemporaryFile(at_signal);
        std::raise(SIGTERM);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_FALSE(std::filesystem::exists(at_signal)) << "a SIGTERM with its default action";
  for (const auto& f : {at_exit, at_terminate, at_signal}) std::filesystem::remove(f);
}

}  // namespace torchfit::runtime
