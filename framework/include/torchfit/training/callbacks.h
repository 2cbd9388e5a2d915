#pragma once
/// @file callbacks.h
/// Every Keras callback torchfit has, one header each: the base class and its hooks (callback.h),
/// ModelCheckpoint, EarlyStopping, CSVLogger, ReduceLROnPlateau, LearningRateScheduler, and the ones
/// fit() adds itself: ProgbarLogger, RunLogger (steps.csv, epochs.csv, run.json), HistoryRecorder.
#include <torchfit/training/callback.h>
#include <torchfit/training/csv_logger.h>
#include <torchfit/training/early_stopping.h>
#include <torchfit/training/history.h>
#include <torchfit/training/learning_rate_scheduler.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/progbar_logger.h>
#include <torchfit/training/reduce_lr_on_plateau.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/tensorboard.h>
