// Replacement of undecodable files by the next readable file of the same class (on_bad_image "skip").
#include "data/replaced_files.h"

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <algorithm>

namespace torchfit::data::detail {

Image decode_or_replace(int64_t index, const SampleGroups& groups, ReplacedFiles& replaced, const DecodeFile& decode) {
  const auto& paths = groups.paths;
  Image img;
  bool ok = !replaced.contains(index) && decode(paths[static_cast<size_t>(index)], img);
  if (ok) return img;
  // Skip policy: the file passed the header check but does not decode. Replace it by the next
  // readable file of the same class (the label stays right and the batch keeps its size).
  const bool first_time = replaced.insert(index);
  const int64_t cls = groups.classes[static_cast<size_t>(index)];
  const auto& same = groups.samples_of_class[static_cast<size_t>(cls)];
  const auto pos = std::find(same.begin(), same.end(), index) - same.begin();
  for (size_t k = 1; k < same.size() && !ok; ++k) {
    const int64_t cand = same[(static_cast<size_t>(pos) + k) % same.size()];
    if (replaced.contains(cand)) continue;
    ok = decode(paths[static_cast<size_t>(cand)], img);
    if (!ok) {
      replaced.insert(cand);
    } else if (first_time) {
      torchfit::logger().warn("undecodable image {} is replaced by {} for the rest of the run",
                              paths[static_cast<size_t>(index)], paths[static_cast<size_t>(cand)]);
    }
  }
  if (!ok)
    throw IoError("no readable image left in class \"" + groups.class_names[static_cast<size_t>(cls)] + "\" of " +
                  groups.directory + " (last tried " + paths[static_cast<size_t>(index)] + ")");
  return img;
}

}  // namespace torchfit::data::detail
