#pragma once
/// @file image_folder.h
/// Image-folder listing: which files of a `directory/<class>/**/*.png|jpg|…` tree are samples, of which
/// class, and which were left out and why — the discovery step of Keras's DirectoryIterator
/// (flow_from_directory), as a function with no state, so every folder source (DirectoryIterator,
/// image_dataset_from_directory) lists folders by the same rules.
#include <torch/arg.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torchfit/data/image.h>

namespace torchfit::data {

/// Class name → index.
using ClassIndices = std::map<std::string, int64_t>;

/// A file that was left out by the listing, with the reason from check_image_file.
struct SkippedFile {
  std::string path;
  std::string reason;
};

/// flow_from_directory's accepted endings (keras-preprocessing's white_list_formats, with the dot).
inline const std::vector<std::string> kFlowImageFormats = {".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff"};
/// image_dataset_from_directory's (Keras 3 ALLOWLIST_FORMATS, keras/src/utils/image_dataset_utils.py).
inline const std::vector<std::string> kImageDatasetFormats = {".bmp", ".gif", ".jpeg", ".jpg", ".png"};

/// What to list (Keras flow_from_directory's names and defaults). Chained setters:
/// `ImageFolderOptions().validation_split(0.2).subset("training")`.
struct ImageFolderOptions {
  /// Explicit class list (sub-folder names); its order gives the indices. Empty (default) ⇒ every
  /// immediate sub-folder, sorted by code point ("1", "10", "2"). Folders not listed are ignored (Keras).
  /// A name given twice is a ConfigError; a name without a folder stays a class with no samples.
  TORCH_ARG(std::vector<std::string>, classes) = {};
  /// Class map of another listing (typically the training one): the indices are taken from it, by
  /// name; it must map its classes to 0..K−1 without gaps or repeats. Every sub-folder of `directory`
  /// must be in it (ConfigError naming the extra folder); classes of the map without a folder stay
  /// classes with no samples. Takes precedence over `classes`. Default empty.
  TORCH_ARG(ClassIndices, class_indices) = {};
  /// Fraction v in [0, 1) of each class's sorted files that forms subset "validation" (the first
  /// int(v·n)); the rest is subset "training". Default 0 (no split). ConfigError outside [0, 1).
  TORCH_ARG(double, validation_split) = 0.0;
  /// "" (default: every file), "training" or "validation" (needs validation_split > 0; ConfigError
  /// otherwise, and for another value).
  TORCH_ARG(std::string, subset) = "";
  /// Follow symbolic links to sub-folders (Keras follow_links). Default false. A link back to a
  /// folder already walked is not walked again (a warning names it; Keras follows it ~40 levels deep).
  TORCH_ARG(bool, follow_links) = false;
  /// Pixel limit of the header check (check_image_file; Pillow's MAX_IMAGE_PIXELS). Default
  /// kMaxImagePixels; 0 = no limit. ConfigError when negative.
  TORCH_ARG(int64_t, max_image_pixels) = kMaxImagePixels;
  /// Threads for the header checks, 0 (default) ⇒ std::thread::hardware_concurrency(); at most one
  /// thread per 64 files is used. The result does not depend on it. ConfigError when negative.
  TORCH_ARG(int64_t, workers) = 0;
  /// File name endings (lower case, with the dot) that select image files: a name is collected when its
  /// lower-cased form ends in one of them. Default kFlowImageFormats (flow_from_directory's);
  /// image_dataset_from_directory passes kImageDatasetFormats.
  TORCH_ARG(std::vector<std::string>, formats) = kFlowImageFormats;
  /// Keras 3's walk (index_directory): only class folders whose name starts with "." are ignored; every
  /// other entry — hidden files (._x.jpg), hidden sub-folders, __MACOSX/ — is walked and collected, and
  /// a name that is only an extension (".png") counts. Default false: hidden entries are ignored
  /// (is_hidden_entry) and an extension needs a name before it.
  TORCH_ARG(bool, keep_hidden) = false;
};

/// The result of list_image_files: the samples in Keras order (class by class, folders walked in sorted
/// path order, files sorted inside each folder) and the files left out.
struct ImageFolderListing {
  /// Class names ordered by index (K entries; a class may have no samples).
  std::vector<std::string> class_names;
  /// Sample paths relative to the directory, e.g. "Coat/00012.png" (Keras `filenames`).
  std::vector<std::string> filenames;
  /// Full paths, directory / filename (Keras `filepaths`), in filenames order.
  std::vector<std::string> filepaths;
  /// Class index of every sample, in filenames order (Keras `classes`).
  std::vector<int64_t> classes;
  /// Files of the subset that failed the header check (full paths, with the reasons), in file order.
  std::vector<SkippedFile> skipped;

  /// class_names as a map name → index.
  ClassIndices class_indices() const;
  /// For every class, the sample indices (into filenames) of that class, ascending.
  std::vector<std::vector<int64_t>> samples_of_class() const;
};

/// Whether `name` is collected as an image file: its lower-cased form ends in .png .jpg .jpeg .bmp
/// .ppm .tif or .tiff with something before the dot (Keras's white_list_formats, with the dot
/// required) and it is not hidden. The extension only selects files (a WebP named .jpg is collected).
bool is_image_file_name(const std::string& name);
/// Whether `name` is collected under `options` (its formats and keep_hidden).
bool is_image_file_name(const std::string& name, const ImageFolderOptions& options);

/// Whether a folder entry is ignored: a name starting with "." (.DS_Store, ._x.jpg,
/// .ipynb_checkpoints/), "__MACOSX" (the folder macOS zip archives add), or an empty name.
/// Keras collects them; see docs/data_pipeline.md, "Differences from Keras".
bool is_hidden_entry(const std::string& name);

/// The class names of `directory`, ordered by index: options.class_indices() (every sub-folder must be
/// in it) if given, else options.classes() (in the given order), else the immediate non-hidden
/// sub-folders sorted by code point (symbolic links to folders count as folders, as Keras's
/// os.scandir). Errors: IoError when `directory` is missing or not a folder, or cannot be listed;
/// ConfigError for a class_indices map with gaps or repeats, a folder missing from it, or a class
/// listed twice in classes.
std::vector<std::string> list_image_classes(const std::string& directory, const ImageFolderOptions& options);

/// The image files (is_image_file_name with `options`) in `folder` and below, as Keras walks them: every
/// folder's files sorted by code point, the folders in sorted order of their paths (os.walk sorted by
/// root), linked sub-folders only with options.follow_links(), hidden entries as options.keep_hidden()
/// says. Returned relative to `folder` with `prefix` in front ("prefix/sub/file"; no prefix: "sub/file").
/// A folder that cannot be listed is named in a warning. No header check.
std::vector<std::string> list_folder_files(const std::string& folder, const std::string& prefix,
                                           const ImageFolderOptions& options);

/// check_image_file (with options.max_image_pixels()) for every path, on options.workers() threads (at
/// most one per 64 files): per path "" when fine, else the reason. The result does not depend on workers.
std::vector<std::string> check_image_files(const std::vector<std::string>& paths, const ImageFolderOptions& options);

/// The samples of `class_names` (index = position) below `directory`: per class, every image file
/// (is_image_file_name) in the class folder and its sub-folders (walked in sorted path order, files
/// sorted by code point inside each folder, hidden entries skipped, linked sub-folders only with
/// follow_links), cut to options.subset() per class — the validation subset is the first
/// int(validation_split · n) files, counted before any header check so a bad file never moves the
/// boundary — then header-checked (check_image_file with max_image_pixels, on `workers` threads):
/// files that fail are returned in `skipped`, not logged. Warnings (logger) name a class without a
/// folder, an empty class folder, a folder that cannot be listed and a link loop. An empty result is
/// not an error (the caller says what it expected). Errors: IoError when `directory` is not a folder;
/// ConfigError for bad options (validation_split outside [0, 1), unknown subset, subset without
/// validation_split, max_image_pixels or workers < 0).
/// Source: keras-preprocessing 1.1 DirectoryIterator (_list_valid_filenames_in_directory,
/// _iter_valid_files); the differences (dot required, hidden entries, link loops) are in
/// docs/data_pipeline.md.
ImageFolderListing list_image_files(const std::string& directory, const std::vector<std::string>& class_names,
                                    const ImageFolderOptions& options);

/// list_image_files(directory, list_image_classes(directory, options), options).
ImageFolderListing list_image_folder(const std::string& directory, const ImageFolderOptions& options);

/// Reads a bad-image policy name (FlowOptions::on_bad_image): "skip" → true, "error" → false.
/// Errors: ConfigError "on_bad_image must be \"skip\" or \"error\", got \"…\"".
bool skips_bad_images(const std::string& on_bad_image);

/// Applies a bad-image policy to a listing's skipped files: "skip" logs one warning per file
/// ("skipping unreadable image PATH: REASON"); "error" throws IoError for the first one
/// ("unreadable image PATH: REASON"). ConfigError for another policy name.
void report_skipped_files(const ImageFolderListing& listing, const std::string& on_bad_image);

}  // namespace torchfit::data
