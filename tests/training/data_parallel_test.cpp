// Tests of framework/src/training/data_parallel.cpp that need no process group (the data-parallel fit
// itself: tests/distributed/distributed_test.cpp, two processes over Gloo).
#include <gtest/gtest.h>

#include <string>

#include <torchfit/error.h>
#include <torchfit/training/data_parallel.h>

using namespace torchfit;

TEST(DataParallel, TheGlobalBatchMustSplitEvenlyAndTheMessageNamesWhatAndWhere) {
  EXPECT_NO_THROW(check_global_batch(8, 4, "--batch-size", "WORLD_SIZE=4 processes"));
  EXPECT_NO_THROW(check_global_batch(7, 1, "fit: the batch size", "the 1 processes"));
  try {
    check_global_batch(4, 3, "--batch-size", "WORLD_SIZE=3 processes");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--batch-size 4 is the global batch and must split evenly over WORLD_SIZE=3 processes (use a "
              "multiple of 3)");
  }
}

TEST(DataParallel, EachShardsLossCountsByItsShareOfTheGlobalBatch) {
  // 10 samples over 4 ranks: shards of 3, 3, 2, 2; the shares sum to 1, so the summed gradients are the
  // global batch's mean.
  EXPECT_DOUBLE_EQ(DataParallel::loss_share(3, 10) + DataParallel::loss_share(3, 10) + DataParallel::loss_share(2, 10) +
                       DataParallel::loss_share(2, 10),
                   1.0);
  EXPECT_DOUBLE_EQ(DataParallel::loss_share(2, 10), 0.2);
  EXPECT_DOUBLE_EQ(DataParallel::loss_share(4, 0), 1.0) << "no global size: the shard is the batch";
}
