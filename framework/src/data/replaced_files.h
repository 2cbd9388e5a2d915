#pragma once
// The replacement of files that pass the header check but fail to decode in a worker (on_bad_image
// "skip"), shared by the folder sources (DirectoryIterator, ImageDataset): the file is named in a warning
// once and its place is taken by the next readable file of the same class, so the label stays right and
// the batch keeps its size.
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <torchfit/data/image.h>

namespace torchfit::data::detail {

// Samples whose file failed to decode so far. No lock while the set is empty (the common case): an
// atomic count is read first.
class ReplacedFiles {
 public:
  bool contains(int64_t index) {
    if (count_.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> lk(mutex_);
    return set_.count(index) > 0;
  }
  // Adds `index`; true the first time.
  bool insert(int64_t index) {
    std::lock_guard<std::mutex> lk(mutex_);
    const bool first = set_.insert(index).second;
    count_.store(static_cast<int64_t>(set_.size()), std::memory_order_relaxed);
    return first;
  }
  std::set<int64_t> all() {
    std::lock_guard<std::mutex> lk(mutex_);
    return set_;
  }

 private:
  std::mutex mutex_;
  std::set<int64_t> set_;
  std::atomic<int64_t> count_{0};
};

// Decodes `path` into `out`: true when it decoded; false (after a warning naming it) when it did not and
// the policy is "skip"; throws IoError under "error".
using DecodeFile = std::function<bool(const std::string& path, Image& out)>;

// A source's samples as the replacement sees them: full paths, the class (group) of each sample, the
// samples of each class (ascending), the class names (for the error) and the directory.
struct SampleGroups {
  const std::vector<std::string>& paths;
  const std::vector<int64_t>& classes;
  const std::vector<std::vector<int64_t>>& samples_of_class;
  const std::vector<std::string>& class_names;
  const std::string& directory;
};

// Sample `index` decoded, or — when it does not decode (or failed before) — the next readable sample of
// its class, cyclically; the replacement is warned once. Errors: IoError when no sample of the class
// decodes ("no readable image left in class …"); decode's IoError under "error".
Image decode_or_replace(int64_t index, const SampleGroups& groups, ReplacedFiles& replaced, const DecodeFile& decode);

}  // namespace torchfit::data::detail
