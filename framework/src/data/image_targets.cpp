// ImageTargetsIterator: an image folder with numeric targets from a CSV (Keras's flow_from_dataframe with
// class_mode "raw"), each image's row looked up by its path below the folder or its bare name.
#include <torchfit/data/image_targets.h>

#include <cmath>
#include <filesystem>
#include <map>

#include <ATen/ATen.h>

#include <torchfit/error.h>
#include <torchfit/io/csv.h>

namespace torchfit::data {
namespace {

size_t column_of(const io::CsvRow& header, const std::string& name, const std::string& csv) {
  for (size_t i = 0; i < header.cells.size(); ++i)
    if (header.cells[i] == name) return i;
  std::string have;
  for (const auto& c : header.cells) have += (have.empty() ? "" : ", ") + c;
  throw ConfigError("targets file '" + csv + "': no column '" + name + "' (its header has: " + have + ")");
}

double number_at(const io::CsvRow& row, size_t column, const std::string& name, const std::string& csv) {
  const std::string cell = column < row.cells.size() ? row.cells[column] : "";
  size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != cell.size() || cell.empty() || !std::isfinite(v)) {
    throw ConfigError("targets file '" + csv + "' line " + std::to_string(row.line) + ", column '" + name + "': '" +
                      cell + "' is not a finite number");
  }
  return v;
}

// The folder's path of an image ("all/0001.png": filenames() are relative to the folder) and its bare name.
std::pair<std::string, std::string> keys_of(const std::string& file) {
  const std::filesystem::path p(file);
  return {p.generic_string(), p.filename().string()};
}

}  // namespace

ImageTargetsIterator::ImageTargetsIterator(std::unique_ptr<DirectoryIterator> images, const std::string& csv,
                                           std::vector<std::string> columns, const std::string& file_column)
    : images_(std::move(images)), csv_(csv), columns_(std::move(columns)) {
  if (!images_) throw ConfigError("image targets: no image source");
  if (columns_.empty()) throw ConfigError("targets file '" + csv + "': no target columns given");
  const auto rows = io::read_csv(csv, ',', "targets file");
  if (rows.empty()) throw ConfigError("targets file '" + csv + "' is empty (it needs a header row)");
  const size_t file_at = column_of(rows[0], file_column, csv);
  std::vector<size_t> at;
  for (const auto& c : columns_) at.push_back(column_of(rows[0], c, csv));
  std::map<std::string, size_t> by_path;
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::string file = file_at < rows[r].cells.size() ? rows[r].cells[file_at] : "";
    if (!by_path.emplace(std::filesystem::path(file).generic_string(), r).second) {
      throw ConfigError("targets file '" + csv + "' line " + std::to_string(rows[r].line) + ": a second row for '" +
                        file + "'");
    }
    by_name[std::filesystem::path(file).filename().string()].push_back(r);
  }
  const auto files = images_->filenames();
  targets_ = at::empty({static_cast<int64_t>(files.size()), static_cast<int64_t>(at.size())}, at::kFloat);
  for (size_t i = 0; i < files.size(); ++i) {
    const auto [path, name] = keys_of(files[i]);
    size_t r = 0;
    if (by_path.count(path)) {
      r = by_path.at(path);
    } else if (by_name.count(name) && by_name.at(name).size() == 1) {
      r = by_name.at(name)[0];
    } else {
      throw ConfigError("targets file '" + csv + "' has no row for the image '" + path + "' (the '" + file_column +
                        "' column holds its path below the folder, or its name when unique)");
    }
    for (size_t k = 0; k < at.size(); ++k)
      targets_[static_cast<int64_t>(i)][static_cast<int64_t>(k)] = number_at(rows[r], at[k], columns_[k], csv);
  }
}

Batch ImageTargetsIterator::next() {
  Batch b = images_->next();
  const at::Tensor idx = at::tensor(b.indices, at::kLong);
  b.y = targets_.index_select(0, idx);
  if (pin_memory()) b.y = b.y.pin_memory();
  return b;
}

StreamConfig ImageTargetsIterator::stream_config() const {
  StreamConfig c = images_->stream_config();
  std::string cols;
  for (const auto& col : columns_) cols += (cols.empty() ? "" : ",") + col;
  c["targets"] = csv_ + " [" + cols + "]";
  return c;
}

void ImageTargetsIterator::shard(int64_t rank, int64_t world_size) {
  BatchIterator::shard(rank, world_size);
  images_->shard(rank, world_size);
}

}  // namespace torchfit::data
