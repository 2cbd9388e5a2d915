// What a training program says after fit(): nothing timed, and an interrupted run's line.
#include <gtest/gtest.h>

#include <torchfit/training/run_report.h>

#include "support/tiny_model.h"

using namespace torchfit;

TEST(RunReport, NoTimedStepGivesNoFigureAndTheInterruptLineSaysWhatWasSaved) {
  Trainer trainer(torchfit::testing::tiny_mlp(), CompileOptions().loss("categorical_crossentropy"),
                  c10::Device(c10::kCPU));
  const TimingReport timing = report_timing(trainer);
  EXPECT_EQ(timing.text, "");
  EXPECT_TRUE(timing.fields.empty());
  EXPECT_EQ(interrupt_exit_status(trainer), 130);  // no signal recorded: SIGINT's status
  EXPECT_EQ(interrupt_report(trainer, nullptr),
            "Interrupted by SIGINT at epoch 1, step 0 (no checkpoint: nothing saved)\n");
  ModelCheckpoint never(ModelCheckpointOptions("never.ckpt"));
  EXPECT_EQ(interrupt_report(trainer, &never),
            "Interrupted by SIGINT at epoch 1, step 0: no checkpoint written (weights not finite)\n");
}
