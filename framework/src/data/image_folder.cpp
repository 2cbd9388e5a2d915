// Image-folder listing: Keras's flow_from_directory discovery (classes, the sorted recursive walk, the
// validation split) plus the header check of every file.
#include <torchfit/data/image_folder.h>
#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

namespace torchfit::data {

namespace fs = std::filesystem;

namespace {

bool entry_is_dir(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec);  // follows symlinks
}

bool entry_is_symlink(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_symlink(ec);
}

// (folder relative to the directory, its sorted image files), one entry per folder walked.
using FolderFiles = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Collects (relative root, sorted image files) for every folder below `abs` (Keras's os.walk).
void walk_folder(const fs::path& abs, const std::string& rel, const ImageFolderOptions& options,
                 std::set<fs::path>& visited, FolderFiles& out) {
  const bool follow_links = options.follow_links();
  std::error_code ec;
  const fs::path canon = fs::canonical(abs, ec);
  if (!ec && !visited.insert(canon).second) {  // a link loop (Keras follows it until the path is too long)
    torchfit::logger().warn(
        "follow_links: '{}' leads to the folder '{}', already walked: not walked again (a link "
        "loop, or a second link to that folder)",
        abs.string(), canon.string());
    return;
  }
  std::vector<std::string> files;
  std::vector<std::pair<fs::path, std::string>> subdirs;
  for (fs::directory_iterator it(abs, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!options.keep_hidden() && is_hidden_entry(name)) continue;
    if (entry_is_dir(*it)) {
      if (entry_is_symlink(*it) && !follow_links) continue;
      subdirs.emplace_back(it->path(), rel.empty() ? name : rel + "/" + name);
    } else if (is_image_file_name(name, options)) {
      files.push_back(name);  // also a dangling link or a special file: the header check names and counts it
    }
  }
  if (ec) torchfit::logger().warn("cannot list {}: {}", abs.string(), ec.message());
  std::sort(files.begin(), files.end());
  out.emplace_back(rel, std::move(files));
  for (const auto& [p, r] : subdirs) walk_folder(p, r, options, visited, out);
}

// The immediate non-hidden sub-folders of `dir`, sorted by code point (keep_hidden: Keras 3's rule, only
// names starting with "." are left out).
std::vector<std::string> class_folders(const fs::path& dir, bool keep_hidden) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool hidden = keep_hidden ? name.empty() || name[0] == '.' : is_hidden_entry(name);
    if (!hidden && entry_is_dir(*it)) names.push_back(name);
  }
  if (ec) throw IoError("cannot list directory " + dir.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

// Class names ordered by index, from a given class_indices map (every folder must be in it).
std::vector<std::string> names_from_class_indices(const ClassIndices& indices, const std::vector<std::string>& folders,
                                                  const std::string& directory) {
  std::vector<std::string> names(indices.size(), "");
  for (const auto& [name, idx] : indices) {
    if (idx < 0 || idx >= static_cast<int64_t>(names.size()) || !names[static_cast<size_t>(idx)].empty())
      throw ConfigError("class_indices must map the classes to 0.." + std::to_string(names.size() - 1) +
                        " without gaps or repeats (class \"" + name + "\" has " + std::to_string(idx) + ")");
    names[static_cast<size_t>(idx)] = name;
  }
  for (const auto& f : folders)
    if (!indices.count(f))
      throw ConfigError("folder \"" + f + "\" in " + directory +
                        " is not one of the given class_indices (a class the training data does not have)");
  return names;
}

// [begin, end) of a class's n sorted files that `subset` keeps: validation = the first int(split·n).
std::pair<size_t, size_t> subset_range(size_t n, double split, const std::string& subset) {
  size_t begin = 0, end = n;
  if (split > 0) {
    const auto nval = static_cast<size_t>(split * static_cast<double>(n));
    if (subset == "validation")
      end = nval;
    else if (subset == "training")
      begin = nval;
  }
  return {begin, end};
}

// check_image_file for every file (empty = fine, else the reason), on up to `workers` threads
// (0 = all cores), one thread per 64 files at most.
std::vector<std::string> check_headers(const std::vector<std::string>& paths, int64_t workers, int64_t max_pixels) {
  std::vector<std::string> reasons(paths.size());
  const size_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const size_t nthreads =
      std::min(std::max<size_t>(1, workers > 0 ? static_cast<size_t>(workers) : hw), paths.size() / 64 + 1);
  std::atomic<size_t> next{0};
  auto check = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();) reasons[i] = check_image_file(paths[i], max_pixels);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < nthreads; ++t) pool.emplace_back(check);
  check();
  for (auto& t : pool) t.join();
  return reasons;
}

void check_listing_options(const ImageFolderOptions& o) {
  if (!(o.validation_split() >= 0 && o.validation_split() < 1))
    throw ConfigError("validation_split must be in [0, 1), got " + std::to_string(o.validation_split()));
  if (o.subset() != "" && o.subset() != "training" && o.subset() != "validation")
    throw ConfigError("subset must be \"training\", \"validation\" or empty, got \"" + o.subset() + "\"");
  if (o.subset() != "" && o.validation_split() == 0)
    throw ConfigError("subset \"" + o.subset() + "\" needs validation_split > 0");
  if (o.max_image_pixels() < 0)
    throw ConfigError("max_image_pixels must be >= 0 (0 = no limit), got " + std::to_string(o.max_image_pixels()));
  if (o.workers() < 0) throw ConfigError("workers must be >= 0 (0 = all cores), got " + std::to_string(o.workers()));
}

void require_folder(const std::string& directory) {
  std::error_code ec;
  if (!fs::is_directory(fs::path(directory), ec))
    throw IoError("image directory not found (or not a folder): " + directory);
}

}  // namespace

bool is_hidden_entry(const std::string& name) { return name.empty() || name[0] == '.' || name == "__MACOSX"; }

bool is_image_file_name(const std::string& name) { return is_image_file_name(name, ImageFolderOptions()); }

bool is_image_file_name(const std::string& name, const ImageFolderOptions& options) {
  if (!options.keep_hidden() && is_hidden_entry(name)) return false;
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t before = options.keep_hidden() ? 0 : 1;  // Keras 3's str.endswith needs nothing before the dot
  for (const std::string& e : options.formats()) {
    const size_t n = e.size();
    if (lower.size() >= n + before && lower.compare(lower.size() - n, n, e) == 0) return true;
  }
  return false;
}

std::vector<std::string> list_folder_files(const std::string& folder, const std::string& prefix,
                                           const ImageFolderOptions& options) {
  FolderFiles roots;
  std::set<fs::path> visited;
  walk_folder(fs::path(folder), prefix, options, visited, roots);
  std::sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> files;
  for (const auto& [root, fnames] : roots)
    for (const auto& f : fnames) files.push_back(root.empty() ? f : root + "/" + f);
  return files;
}

std::vector<std::string> check_image_files(const std::vector<std::string>& paths, const ImageFolderOptions& options) {
  return check_headers(paths, options.workers(), options.max_image_pixels());
}

ClassIndices ImageFolderListing::class_indices() const {
  ClassIndices out;
  for (size_t i = 0; i < class_names.size(); ++i) out[class_names[i]] = static_cast<int64_t>(i);
  return out;
}

std::vector<std::vector<int64_t>> ImageFolderListing::samples_of_class() const {
  std::vector<std::vector<int64_t>> out(class_names.size());
  for (size_t i = 0; i < classes.size(); ++i) out[static_cast<size_t>(classes[i])].push_back(static_cast<int64_t>(i));
  return out;
}

std::vector<std::string> list_image_classes(const std::string& directory, const ImageFolderOptions& options) {
  require_folder(directory);
  const std::vector<std::string> folders = class_folders(fs::path(directory), options.keep_hidden());
  if (!options.class_indices().empty()) return names_from_class_indices(options.class_indices(), folders, directory);
  if (options.classes().empty()) return folders;
  std::set<std::string> seen;
  for (const auto& n : options.classes())
    if (!seen.insert(n).second) throw ConfigError("class \"" + n + "\" is listed twice in classes");
  return options.classes();
}

ImageFolderListing list_image_files(const std::string& directory, const std::vector<std::string>& class_names,
                                    const ImageFolderOptions& options) {
  check_listing_options(options);
  require_folder(directory);
  const fs::path dir(directory);
  std::vector<std::string> files, paths;  // the subset, before the header check
  std::vector<int64_t> classes;
  std::error_code ec;
  for (size_t ci = 0; ci < class_names.size(); ++ci) {
    const fs::path class_dir = dir / class_names[ci];
    if (!fs::is_directory(class_dir, ec)) {
      torchfit::logger().warn("class \"{}\" has no folder in {}; it stays a class without images", class_names[ci],
                              directory);
      continue;
    }
    const std::vector<std::string> all = list_folder_files(class_dir.string(), class_names[ci], options);
    if (all.empty()) torchfit::logger().warn("class folder {} holds no images; it stays a class", class_dir.string());
    const auto [begin, end] = subset_range(all.size(), options.validation_split(), options.subset());
    for (size_t i = begin; i < end; ++i) {
      files.push_back(all[i]);
      paths.push_back((dir / all[i]).string());
      classes.push_back(static_cast<int64_t>(ci));
    }
  }
  const std::vector<std::string> reasons = check_headers(paths, options.workers(), options.max_image_pixels());
  ImageFolderListing out;
  out.class_names = class_names;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!reasons[i].empty()) {
      out.skipped.push_back({paths[i], reasons[i]});
      continue;
    }
    out.filenames.push_back(files[i]);
    out.filepaths.push_back(paths[i]);
    out.classes.push_back(classes[i]);
  }
  return out;
}

ImageFolderListing list_image_folder(const std::string& directory, const ImageFolderOptions& options) {
  return list_image_files(directory, list_image_classes(directory, options), options);
}

bool skips_bad_images(const std::string& on_bad_image) {
  if (on_bad_image != "skip" && on_bad_image != "error")
    throw ConfigError("on_bad_image must be \"skip\" or \"error\", got \"" + on_bad_image + "\"");
  return on_bad_image == "skip";
}

void report_skipped_files(const ImageFolderListing& listing, const std::string& on_bad_image) {
  const bool skip = skips_bad_images(on_bad_image);
  for (const SkippedFile& s : listing.skipped) {
    if (!skip) throw IoError("unreadable image " + s.path + ": " + s.reason);
    torchfit::logger().warn("skipping unreadable image {}: {}", s.path, s.reason);
  }
}

}  // namespace torchfit::data
