// Golden tests of the Keras progress line, with an injected clock.
#include <gtest/gtest.h>

#include <sstream>

#include <torchfit/training/progbar.h>

using namespace torchfit;

namespace {
struct FakeClock {
  double t = 100.0;
  Progbar::Clock fn() {
    return [this] { return t; };
  }
};
}  // namespace

TEST(Progbar, Bar) {
  EXPECT_EQ(Progbar::bar(1000, 1000), "[==============================]");
  EXPECT_EQ(Progbar::bar(12, 100), "[==>...........................]");
  EXPECT_EQ(Progbar::bar(0, 100), "[..............................]");
}

TEST(Progbar, NonTerminalPrintsOnlyTheFinalLine) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(1000, 1, /*dynamic=*/false, out, clock.fn());
  for (int s = 1; s <= 1000; ++s) {
    clock.t += 0.035;
    bar.update(s, {{"loss", 1.0006}, {"categorical_accuracy", 0.6425}});
  }
  clock.t += 3.0;  // validation
  bar.finalize(
      {{"loss", 1.0006}, {"categorical_accuracy", 0.6425}, {"val_loss", 0.8249}, {"val_categorical_accuracy", 0.6938}});
  EXPECT_EQ(out.str(),
            "1000/1000 [==============================] - 38s 38ms/step - loss: 1.0006 - categorical_accuracy: "
            "0.6425 - val_loss: 0.8249 - val_categorical_accuracy: 0.6938\n");
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
}

TEST(Progbar, TerminalRewritesInPlaceWithEta) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(10, 1, /*dynamic=*/true, out, clock.fn());
  clock.t += 1.0;
  bar.update(1, {{"loss", 0.5}});
  EXPECT_EQ(out.str(), "\r 1/10 [==>...........................] - ETA: 9s - loss: 0.5000");
  out.str("");
  clock.t += 9.0;
  for (int s = 2; s <= 10; ++s) bar.update(s, {{"loss", 0.25}});
  bar.finalize({{"loss", 0.25}});
  EXPECT_EQ(out.str().substr(out.str().rfind('\r')),
            "\r10/10 [==============================] - 10s 1s/step - loss: 0.2500\n");
}

TEST(Progbar, VerboseTwoAndZeroAndSmallValues) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(5, 2, false, out, clock.fn());
  for (int s = 1; s <= 5; ++s) {
    clock.t += 0.0005;
    bar.update(s, {});
  }
  bar.finalize({{"loss", 0.0001234}});
  EXPECT_EQ(out.str(), "5/5 - 0s - 500us/step - loss: 1.2340e-04\n");
  std::ostringstream silent;
  Progbar quiet(5, 0, false, silent, clock.fn());
  quiet.update(5, {});
  quiet.finalize({{"loss", 1.0}});
  EXPECT_EQ(silent.str(), "");
}
