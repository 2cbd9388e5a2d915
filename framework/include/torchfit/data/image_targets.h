#pragma once
/// @file image_targets.h
/// Images with numeric targets from a CSV file (regression, multi-label): Keras's
/// ImageDataGenerator.flow_from_dataframe(dataframe, x_col="filename", y_col=[…], class_mode="raw") over
/// an image folder read by flow_from_directory(class_mode=None), each image's row found by its file name.
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/directory_iterator.h>

namespace torchfit::data {

/// Batches of (images, targets): x the image source's batch (N, C, H, W); y float32 (N, K), the values of
/// the K `columns` of the CSV row of each image (Keras's class_mode "raw" with a list y_col; one column
/// gives (N, 1)). The CSV (RFC 4180, a header row) has a file column — `file_column`, default
/// "filename" — holding each image's path below the image folder ("all/0001.png"), or its bare name when
/// that is unique; the other columns named in `columns` are numbers.
///
/// Errors (constructor; ConfigError or IoError naming the CSV file, its line and column or the image):
/// an unreadable or malformed file, a missing file column or target column, a cell that is not a finite
/// number, two rows for one image, an image without a row (the first one named; Keras drops such images
/// with a warning — here that would lose data silently), no columns. Rows for files that are not images
/// of the folder are ignored (a CSV often lists more).
class ImageTargetsIterator : public BatchIterator {
 public:
  ImageTargetsIterator(std::unique_ptr<DirectoryIterator> images, const std::string& csv,
                       std::vector<std::string> columns, const std::string& file_column = "filename");

  Batch next() override;
  int64_t samples() const override { return images_->samples(); }
  int64_t batch_size() const override { return images_->batch_size(); }
  void reset() override { images_->reset(); }
  void skip(int64_t batches) override { images_->skip(batches); }
  /// The image source's settings, plus "targets" (the CSV file and its columns).
  StreamConfig stream_config() const override;
  nlohmann::json preprocessing() const override { return images_->preprocessing(); }
  std::vector<std::string> filenames() const override { return images_->filenames(); }
  void shard(int64_t rank, int64_t world_size) override;

  /// Every image's targets, (samples(), K) float32, in filenames() order.
  const at::Tensor& targets() const { return targets_; }

 private:
  std::unique_ptr<DirectoryIterator> images_;
  std::string csv_;
  std::vector<std::string> columns_;
  at::Tensor targets_;
};

}  // namespace torchfit::data
