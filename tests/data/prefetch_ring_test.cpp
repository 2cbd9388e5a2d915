// Tests of the reusable batch machinery (prefetch_ring.h) with a synthetic source — no files: the
// buffer pool, the batch assembly (pass orders, shards, one fill per sample) and the worker ring
// (order, errors, seek, prompt stop).
#include <gtest/gtest.h>

#include <torchfit/data/prefetch_ring.h>
#include <torchfit/data/random.h>
#include <torchfit/error.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace torchfit::data;

namespace prefetch_ring_test {

// The synthetic source's sample: every value of sample `index` is index + pass / 1000.
FillSample index_fill() {
  return [](int64_t index, int64_t pass, int64_t /*position*/, float* out) {
    for (int k = 0; k < 2 * 3 * 3; ++k) out[k] = static_cast<float>(index) + static_cast<float>(pass) / 1000.f;
  };
}

}  // namespace prefetch_ring_test

using namespace prefetch_ring_test;

TEST(BatchBufferPool, ReusesAFreedBufferAndOutlivesItsOwner) {
  auto pool = std::make_shared<BatchBufferPool>(4 * 2 * 3 * sizeof(float), 2);
  void* first;
  {
    at::Tensor t = pool->tensor({4, 2, 3});
    first = t.data_ptr();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u) << "64-byte aligned";
  }
  EXPECT_EQ(pool->idle(), 1u);
  at::Tensor again = pool->tensor({2, 2, 3});  // a partial batch fits the same buffer
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_THROW(pool->tensor({6, 2, 3}), std::invalid_argument);  // 144 bytes > 96 rounded up to 128
  pool.reset();                                                  // the tensor keeps the pool alive
  again.fill_(7.f);
  EXPECT_EQ(again.sum().item<float>(), 7.f * 12);
}

TEST(BatchAssembler, PassesFollowPassOrderAndTheLastBatchIsPartial) {
  BatchAssembler a(10, 4, {2, 3, 3}, /*shuffle=*/true, /*seed=*/5, 4);
  for (int64_t pass = 0; pass < 2; ++pass) {
    const std::vector<int64_t> order = pass_order(10, true, 5, pass);
    std::vector<int64_t> seen;
    for (int64_t b = 0; b < 3; ++b) {
      const Batch batch = a.assemble(pass, b, 0, 1, false, index_fill());
      ASSERT_EQ(batch.x.sizes(), (at::IntArrayRef{b < 2 ? 4 : 2, 2, 3, 3}));
      EXPECT_FALSE(batch.y.defined());
      EXPECT_EQ(batch.global_size, 0);
      for (size_t i = 0; i < batch.indices.size(); ++i) {
        EXPECT_EQ(batch.indices[i], order[static_cast<size_t>(b * 4) + i]);
        EXPECT_FLOAT_EQ(batch.x[static_cast<int64_t>(i)][1][2][0].item<float>(),
                        static_cast<float>(batch.indices[i]) + static_cast<float>(pass) / 1000.f);
        seen.push_back(batch.indices[i]);
      }
    }
    EXPECT_EQ(seen, order);
  }
  EXPECT_EQ(*a.order(1), pass_order(10, true, 5, 1));
  BatchAssembler sorted(3, 2, {2, 3, 3}, false, 0, 1);  // index_fill writes 2·3·3 values
  EXPECT_EQ(sorted.assemble(0, 0, 0, 1, false, index_fill()).indices, (std::vector<int64_t>{0, 1}));
}

TEST(BatchAssembler, ShardsOfABatchAreItsPartsInOrder) {
  BatchAssembler a(10, 4, {2, 3, 3}, true, 9, 4);
  const Batch whole = a.assemble(0, 2, 0, 1, false, index_fill());  // the partial batch: 2 samples
  std::vector<int64_t> joined;
  for (int64_t rank = 0; rank < 3; ++rank) {
    const Batch part = a.assemble(0, 2, rank, 3, false, index_fill());
    EXPECT_EQ(part.global_size, 2);
    joined.insert(joined.end(), part.indices.begin(), part.indices.end());
  }
  EXPECT_EQ(joined, whole.indices);  // ranks 0, 1, 2 of 2 samples: 0, 1, 1 samples
}

TEST(BatchAssembler, StopsFillingWhenAskedAndChecksItsShape) {
  BatchAssembler a(8, 8, {1, 1, 1}, false, 0, 1);
  std::atomic<bool> stop{false};
  int calls = 0;
  const Batch b = a.assemble(
      0, 0, 0, 1, false,
      [&](int64_t, int64_t, int64_t, float* out) {
        *out = 1.f;
        if (++calls == 3) stop = true;
      },
      &stop);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(b.size(), 8) << "the batch keeps its shape; the worker drops it";
  EXPECT_THROW(BatchAssembler(8, 0, {1, 1, 1}, false, 0, 1), torchfit::ConfigError);
  EXPECT_THROW(BatchAssembler(8, 2, {0, 1, 1}, false, 0, 1), torchfit::ConfigError);
}

TEST(PrefetchRing, HandsOutJobsInOrderForAnyNumberOfWorkers) {
  for (int64_t workers : {1, 4}) {
    PrefetchRing ring(
        [](int64_t job) {
          Batch b;
          b.x = at::full({1}, static_cast<float>(job));
          if (job % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // finish out of order
          return b;
        },
        workers, 3);
    EXPECT_FALSE(ring.running());
    for (int64_t j = 0; j < 12; ++j) EXPECT_EQ(ring.next().x.item<float>(), static_cast<float>(j));
    EXPECT_TRUE(ring.running());
    EXPECT_EQ(ring.position(), 12);
    ring.seek(40);
    EXPECT_FALSE(ring.running());
    EXPECT_EQ(ring.next().x.item<float>(), 40.f);
    ring.seek(0);
    EXPECT_EQ(ring.next().x.item<float>(), 0.f);
  }
}

TEST(PrefetchRing, AJobsErrorIsRethrownAtItsPlaceAndTheRingGoesOn) {
  PrefetchRing ring(
      [](int64_t job) {
        if (job == 2) throw torchfit::IoError("job 2 failed");
        Batch b;
        b.x = at::full({1}, static_cast<float>(job));
        return b;
      },
      2, 4);
  EXPECT_EQ(ring.next().x.item<float>(), 0.f);
  EXPECT_EQ(ring.next().x.item<float>(), 1.f);
  EXPECT_THROW(ring.next(), torchfit::IoError);
  EXPECT_EQ(ring.next().x.item<float>(), 3.f);
}

TEST(PrefetchRing, StopEndsALongJobPromptlyAndBadOptionsAreErrors) {
  std::atomic<int> started{0};
  std::unique_ptr<PrefetchRing> ring;
  ring = std::make_unique<PrefetchRing>(
      [&](int64_t) {
        ++started;
        while (!ring->stopping().load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return Batch{};
      },
      2, 2);
  ring->start();
  while (started.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ring->stop();  // returns only once both workers have left their job
  EXPECT_FALSE(ring->running());
  ring.reset();
  EXPECT_THROW(PrefetchRing([](int64_t) { return Batch{}; }, -1, 2), torchfit::ConfigError);
  EXPECT_THROW(PrefetchRing([](int64_t) { return Batch{}; }, kMaxWorkers + 1, 2), torchfit::ConfigError);
  EXPECT_THROW(PrefetchRing([](int64_t) { return Batch{}; }, 1, 0), torchfit::ConfigError);
  EXPECT_EQ(PrefetchRing([](int64_t) { return Batch{}; }, 3, 1).threads(), 3);
}
