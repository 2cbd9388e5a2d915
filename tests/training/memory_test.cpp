// RSS stays flat across epochs: fit keeps no autograd graph alive between steps (metrics come from
// item() values). A leak of one step's graph (~1 MB here) would add ~200 MB over the run.
#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>

#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

namespace {
double rss_mb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

struct RssSampler : Callback {
  std::vector<double> mb;
  void on_epoch_end(int, const Logs&) override { mb.push_back(rss_mb()); }
};
}  // namespace

TEST(Memory, RssFlatOverFiveEpochsOf200Steps) {
  at::manual_seed(0);
  Sequential m;
  m->add(Dense(DenseOptions(256).activation("relu").input_shape(Shape{4096})));
  m->add(Dense(DenseOptions(4).activation("softmax")));
  Trainer t(m, CompileOptions().metrics({"accuracy"}));
  data::TensorIterator it(at::randn({256, 4096}), at::one_hot(at::arange(256) % 4, 4).to(at::kFloat), 32, true, 1);
  data::TensorIterator val(at::randn({64, 4096}), at::one_hot(at::arange(64) % 4, 4).to(at::kFloat), 32);
  auto sampler = std::make_shared<RssSampler>();
  t.fit(it, FitOptions().epochs(5).steps_per_epoch(40).validation_data(&val).verbose(0).callbacks({sampler}));
  ASSERT_EQ(sampler->mb.size(), 5u);
  const double growth = sampler->mb.back() - sampler->mb.front();
  EXPECT_LT(growth, 50.0) << "RSS after epoch 1: " << sampler->mb.front()
                          << " MB, after epoch 5: " << sampler->mb.back() << " MB";
}
