#include <torchfit/keras/keras_file.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <torchfit/error.h>
#include <torchfit/layers/layer.h>
#include <torchfit/layers/registry.h>

#include "keras/keras_layer_config.h"
#include "keras/keras_variables.h"
#include "keras/tfjs_file.h"

#if TORCHFIT_HAVE_KERAS_IMPORT
#include <zip.h>

#include "keras/hdf5_file.h"
#include "keras/keras_layer_config.h"
#endif

namespace torchfit::keras {
namespace {

std::string lower_extension(const std::string& path) {
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

nlohmann::json parse_model_json(const std::string& text, const std::string& where) {
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("class_name") || !j.contains("config")) {
      throw IoError(where + ": not a Keras model config (expected {\"class_name\", \"config\"})");
    }
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    throw IoError(where + ": not valid JSON (" + e.what() + ")");
  }
}

bool uses_keras1_arguments(const nlohmann::json& layer_config) {
  for (const char* k : {"nb_filter", "output_dim", "dim_ordering", "border_mode", "subsample", "nb_row"}) {
    if (layer_config.is_object() && layer_config.contains(k)) return true;
  }
  return false;
}

#if TORCHFIT_HAVE_KERAS_IMPORT
using detail::Hdf5File;

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open the architecture JSON");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_model_json(ss.str(), path);
}

// Adds the dataset at `path` to `w` with its declared shape and type (its data stays unread).
void add_declared(const Hdf5File& h5, const std::string& path, KerasLayerWeights& w) {
  auto info = h5.dataset_info(path);
  w.paths.push_back(path);
  w.shapes.push_back(std::move(info.shape));
  w.dtypes.push_back(std::move(info.dtype));
}

// Weights of the layer groups under `root` ("/model_weights" or "/"), found through each group's
// weight_names (HDF5 lists datasets alphabetically: bias before kernel).
std::vector<KerasLayerWeights> read_h5_weights(const Hdf5File& h5, const std::string& root) {
  std::vector<KerasLayerWeights> out;
  const std::string prefix = root == "/" ? "/" : root + "/";
  for (const auto& layer : h5.strings(root, "layer_names")) {
    const std::string group = prefix + layer;
    if (!h5.exists(group))
      throw IoError(h5.name() + ": layer_names lists '" + layer + "' but there is no group " + group);
    KerasLayerWeights w{layer, h5.strings(group, "weight_names"), {}, {}, {}};
    if (w.names.empty()) continue;
    for (const auto& n : w.names) add_declared(h5, group + "/" + n, w);
    out.push_back(std::move(w));
  }
  return out;
}

std::string optional_attribute(const Hdf5File& h5, const std::string& object, const std::string& attr) {
  return h5.has_attribute(object, attr) ? h5.string(object, attr) : std::string();
}

std::vector<KerasLayerWeights> read_keras3_weights(const Hdf5File& h5, const nlohmann::json& config);

KerasFile read_h5(const std::string& path, const std::string& architecture_json, const KerasWeightsBudget& budget) {
  auto shared = std::make_shared<const Hdf5File>(path);
  const Hdf5File& h5 = *shared;
  KerasFile f;
  f.path = path;
  const bool full = h5.has_attribute("/", "model_config");
  f.kind = full ? "h5 model" : "h5 weights";
  const std::string root = full ? "/model_weights" : "/";
  f.keras_version = optional_attribute(h5, root, "keras_version");
  if (f.keras_version.empty()) f.keras_version = optional_attribute(h5, "/", "keras_version");
  f.backend = optional_attribute(h5, root, "backend");
  if (f.backend.empty()) f.backend = optional_attribute(h5, "/", "backend");
  if (!architecture_json.empty()) {
    f.model_config = read_json_file(architecture_json);
  } else if (full) {
    f.model_config = parse_model_json(h5.string("/", "model_config"), path + " (attribute model_config)");
  } else {
    throw IoError(path +
                  ": holds only weights (model.save_weights); give the architecture JSON of "
                  "model.to_json() beside it");
  }
  const std::string torchfit = optional_attribute(h5, "/", "torchfit");
  if (!torchfit.empty()) {
    const auto j = nlohmann::json::parse(torchfit, nullptr, false);
    if (j.is_discarded()) throw IoError(path + ": the torchfit attribute is not valid JSON");
    f.torchfit = TorchfitMetadata::from_json(j, path);
  }
  const std::string training = optional_attribute(h5, "/", "training_config");
  if (!training.empty()) {
    f.compile_config = nlohmann::json::parse(training, nullptr, false);
    if (f.compile_config.is_discarded()) throw IoError(path + ": the training_config attribute is not valid JSON");
  }
  if (!full && !h5.has_attribute(root, "layer_names") && h5.exists("/layers")) {  // Keras 3 save_weights
    f.kind = "keras3 weights";
    if (budget) budget(f);
    f.weights = read_keras3_weights(h5, f.model_config);
    f.hdf5 = std::move(shared);
    return f;
  }
  if (!h5.has_attribute(root, "layer_names")) {
    throw IoError(path + ": no layer_names attribute on " + root + " (not a Keras weights file)");
  }
  if (budget) budget(f);  // the datasets stay on disk: only their headers are read here
  f.weights = read_h5_weights(h5, root);
  f.hdf5 = std::move(shared);
  return f;
}

constexpr uint64_t kMaxJsonBytes = uint64_t{64} << 20;  // config.json, metadata.json
constexpr uint64_t kMaxDeflateRatio = 1032;             // deflate's largest expansion

// The entry `name`'s declared size, checked against the archive (`archive_bytes`) and `cap` (0: none)
// before a byte is inflated.
uint64_t declared_entry_size(zip_t* z, const std::string& path, const std::string& name, uint64_t archive_bytes,
                             uint64_t cap) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(z, name.c_str(), 0, &st) != 0) throw IoError(path + ": the .keras zip has no " + name);
  const std::string entry = path + ": zip entry " + name + " declares " + std::to_string(st.size) + " bytes";
  if (st.comp_size > archive_bytes) {
    throw IoError(entry + " stored in " + std::to_string(st.comp_size) + ", more than the whole archive (" +
                  std::to_string(archive_bytes) + " bytes): a damaged or crafted file");
  }
  if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size) {
    throw IoError(entry + " but stores " + std::to_string(st.comp_size) + " uncompressed: a damaged or crafted file");
  }
  if (st.comp_method != ZIP_CM_STORE && st.size > kMaxDeflateRatio * st.comp_size + 1024) {
    throw IoError(entry + " from " + std::to_string(st.comp_size) +
                  " compressed, more than deflate expands (1032:1): a damaged or crafted file");
  }
  if (cap > 0 && st.size > cap) {
    throw IoError(entry + ", more than the " + std::to_string(cap) + " bytes " +
                  (name == "model.weights.h5" ? "the model's weights can take" : "a Keras " + name + " is read up to") +
                  "; nothing inflated");
  }
  return st.size;
}

// The bytes of entry `name`, read in pieces (what is held only grows with what is really inflated) after
// its declared size passed declared_entry_size; it must hold exactly that size.
std::string zip_entry(zip_t* z, const std::string& path, const std::string& name, uint64_t cap) {
  std::error_code ec;
  const uint64_t archive_bytes = std::filesystem::file_size(path, ec);
  const uint64_t declared = declared_entry_size(z, path, name, ec ? 0 : archive_bytes, cap);
  zip_file_t* zf = zip_fopen(z, name.c_str(), 0);
  if (!zf) throw IoError(path + ": cannot open " + name + " inside the zip");
  std::string data;
  std::vector<char> piece(1 << 20);
  zip_int64_t got = 0;
  while ((got = zip_fread(zf, piece.data(), piece.size())) > 0 && data.size() <= declared) {
    data.append(piece.data(), static_cast<size_t>(got));
  }
  zip_fclose(zf);
  if (got < 0)
    throw IoError(path + ": cannot read " + name + " inside the zip (damaged: " + std::to_string(data.size()) + " of " +
                  std::to_string(declared) + " declared bytes read)");
  if (data.size() != declared) {
    throw IoError(path + ": zip entry " + name + " declares " + std::to_string(declared) + " bytes but holds " +
                  std::to_string(data.size()) + ": a damaged or crafted file");
  }
  return data;
}

// A wrapper's variable folders under `group` ("/layers/<key>/"): its layers' (Bidirectional's forward_layer/
// cell/vars, backward_layer/cell/vars; TimeDistributed's layer/vars), read from the layer its config builds.
// None for another layer, or a config torchfit cannot build (the model's own build names that error).
std::vector<std::string> wrapper_folders(const nlohmann::json& spec, const std::string& group) {
  std::shared_ptr<Layer> layer;
  try {
    keras_config::Findings findings;
    layer = layer_from_json(keras_config::layer_spec(spec, findings));
  } catch (const ConfigError&) {
    return {};
  }
  if (detail::wrapped_layers(*layer).empty()) return {};
  std::vector<std::string> folders;
  for (const auto& f : detail::keras3_variable_folders(*layer)) folders.push_back(group + f);
  return folders;
}

// The datasets `names` of the group `vars` (/layers/<key>/…/vars) in their numeric order (0, 1, …, 10),
// named relative to the layer's group (vars/0, cell/vars/0, query_dense/vars/0).
void add_keras3_vars(const Hdf5File& h5, const std::string& vars, std::vector<std::string> names,
                     KerasLayerWeights& w) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& v : names) {
    w.names.push_back(vars.substr(vars.find('/', 8) + 1) + "/" + v);
    add_declared(h5, vars + "/" + v, w);
  }
}

// Keras 3 keys: snake_case of the Python class name (keras_name_base), then _1, _2, … per class in layer order
// (InputLayer has none).
std::vector<KerasLayerWeights> read_keras3_weights(const Hdf5File& h5, const nlohmann::json& config) {
  std::vector<KerasLayerWeights> out;
  std::map<std::string, int> seen;
  for (const auto& spec : keras_config_layers(config)) {
    const std::string cls = spec.value("class_name", "");
    if (cls == "InputLayer") continue;
    const std::string base = keras_name_base(cls);
    const int n = seen[base]++;
    const std::string key = n == 0 ? base : base + "_" + std::to_string(n);
    std::string vars = "/layers/" + key + "/vars";
    const std::string layer = spec.value("config", nlohmann::json::object()).value("name", key);
    if (!h5.exists(vars))
      throw IoError(h5.name() + ": no weights group " + vars + " for layer '" + layer + "' (" + cls + ")");
    auto names = h5.children(vars);
    // A recurrent layer's weights are its cell's (Keras 3 saves the RNN's `cell` as a child: cell/vars).
    const std::string cell_vars = "/layers/" + key + "/cell/vars";
    if (names.empty() && h5.exists(cell_vars)) {
      vars = cell_vars;
      names = h5.children(vars);
    }
    std::vector<std::string> folders = {vars};
    if (names.empty()) folders = wrapper_folders(spec, "/layers/" + key + "/");
    KerasLayerWeights w{layer, {}, {}, {}, {}};
    for (const auto& folder : folders) {
      // A folder the file lacks holds nothing; the weights' count is checked against the built layer.
      if (folder != vars) names = h5.exists(folder) ? h5.children(folder) : std::vector<std::string>{};
      add_keras3_vars(h5, folder, names, w);
    }
    // A layer made of sublayers keeps its variables in theirs (MultiHeadAttention's query_dense/vars, …).
    for (const auto& child :
         w.names.empty() ? keras_config::keras3_weight_children(cls) : std::vector<keras_config::WeightChild>()) {
      const std::string child_vars = "/layers/" + key + "/" + child.attribute + "/vars";
      if (!h5.exists(child_vars)) {
        throw IoError(h5.name() + ": no weights group " + child_vars + " for layer '" + layer + "' (" + cls + ")");
      }
      add_keras3_vars(h5, child_vars, h5.children(child_vars), w);
    }
    if (w.names.empty()) continue;
    out.push_back(std::move(w));
  }
  return out;
}

KerasFile read_keras_zip(const std::string& path, const KerasWeightsBudget& budget) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!z) throw IoError(path + ": not a zip file (a .keras file is one), or missing/unreadable");
  KerasFile f;
  f.path = path;
  f.kind = "keras zip";
  try {
    f.model_config = parse_model_json(zip_entry(z, path, "config.json", kMaxJsonBytes), path + " (config.json)");
    f.compile_config = f.model_config.value("compile_config", nlohmann::json());
    const auto meta = nlohmann::json::parse(zip_entry(z, path, "metadata.json", kMaxJsonBytes), nullptr, false);
    if (meta.is_object()) f.keras_version = meta.value("keras_version", "");
    if (meta.is_object()) f.torchfit = TorchfitMetadata::from_json(meta.value("torchfit", nlohmann::json()), path);
    const uint64_t cap = budget ? budget(f) : 0;
    auto h5 = std::make_shared<const Hdf5File>(zip_entry(z, path, "model.weights.h5", cap),
                                               path + " (model.weights.h5)");  // HDF5 copies the image
    zip_close(z);
    z = nullptr;
    f.weights = read_keras3_weights(*h5, f.model_config);
    f.hdf5 = std::move(h5);
  } catch (...) {
    if (z) zip_close(z);
    throw;
  }
  return f;
}
#endif  // TORCHFIT_HAVE_KERAS_IMPORT

}  // namespace

nlohmann::json TorchfitMetadata::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (!class_names.empty()) j["class_names"] = class_names;
  if (!preprocessing.is_null()) j["preprocessing"] = preprocessing;
  return j;
}

TorchfitMetadata torchfit_metadata(const std::map<std::string, int64_t>& class_indices,
                                   const nlohmann::json& preprocessing) {
  TorchfitMetadata m;
  m.preprocessing = preprocessing;
  m.class_names.resize(class_indices.size());
  for (const auto& [name, index] : class_indices) {
    if (index < 0 || index >= static_cast<int64_t>(class_indices.size())) {
      m.class_names.clear();
      break;
    }
    m.class_names[static_cast<size_t>(index)] = name;
  }
  return m;
}

TorchfitMetadata TorchfitMetadata::from_json(const nlohmann::json& j, const std::string& path) {
  TorchfitMetadata m;
  if (j.is_null()) return m;
  if (!j.is_object()) throw IoError(path + ": torchfit's metadata is not a JSON object");
  if (j.contains("class_names")) {
    const auto& names = j["class_names"];
    const bool strings =
        names.is_array() && std::all_of(names.begin(), names.end(), [](const auto& n) { return n.is_string(); });
    if (!strings) throw IoError(path + ": torchfit's metadata class_names is not a list of strings");
    m.class_names = names.get<std::vector<std::string>>();
    if (std::set<std::string>(m.class_names.begin(), m.class_names.end()).size() != m.class_names.size())
      throw IoError(path + ": torchfit's metadata class_names repeats a name");
  }
  if (j.contains("preprocessing")) {
    if (!j["preprocessing"].is_object() && !j["preprocessing"].is_null())
      throw IoError(path + ": torchfit's metadata preprocessing is not a JSON object");
    m.preprocessing = j["preprocessing"];
  }
  return m;
}

at::Tensor KerasFile::read_weight(const KerasLayerWeights& w, size_t i) const {
  if (values) {
    const auto it = i < w.paths.size() ? values->find(w.paths[i]) : values->end();
    if (it == values->end()) throw IoError(path + ": layer '" + w.layer + "' has no weight " + std::to_string(i));
    return it->second.to(at::kDouble);
  }
#if TORCHFIT_HAVE_KERAS_IMPORT
  if (!hdf5 || i >= w.paths.size())
    throw IoError(path + ": layer '" + w.layer + "' has no weight " + std::to_string(i));
  return hdf5->dataset(w.paths[i]);
#else
  (void)w;
  (void)i;
  throw ConfigError(path + ": this torchfit was built without the Keras readers (HDF5 and libzip)");
#endif
}

const KerasLayerWeights* KerasFile::find(const std::string& name) const {
  for (const auto& w : weights) {
    if (w.layer == name) return &w;
  }
  return nullptr;
}

int KerasFile::keras_major() const {
  if (!keras_version.empty() && std::isdigit(static_cast<unsigned char>(keras_version[0]))) {
    return std::stoi(keras_version);
  }
  for (const auto& spec : keras_config_layers(model_config)) {
    if (spec.value("class_name", std::string()) == "Embedding") continue;  // output_dim is Embedding's own (Keras 1–3)
    if (uses_keras1_arguments(spec.value("config", nlohmann::json::object()))) return 1;
  }
  return 2;
}

bool keras_import_available() { return TORCHFIT_HAVE_KERAS_IMPORT != 0; }

bool is_tfjs_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return std::filesystem::is_regular_file(path + "/model.json", ec);
  if (lower_extension(path) != ".json") return false;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.contains("weightsManifest");
}

bool is_keras_file(const std::string& path) {
  if (is_tfjs_model(path)) return true;
  const std::string ext = lower_extension(path);
  if (ext == ".keras") return true;
  if (ext != ".h5" && ext != ".hdf5") return false;
  // A torchfit checkpoint written under a .h5 name (train_cnn --checkpoint model.h5, as Keras users name
  // files) is a zip archive: read it as the checkpoint it is. HDF5 files start with "\x89HDF\r\n\x1a\n".
  std::ifstream in(path, std::ios::binary);
  char head[4] = {};
  return !(in.read(head, 4) && std::string(head, 4) == std::string("PK\x03\x04", 4));
}

std::vector<nlohmann::json> keras_config_layers(const nlohmann::json& model_config) {
  const auto& config = model_config.at("config");
  const nlohmann::json& layers = config.is_array() ? config : config.value("layers", nlohmann::json());
  if (!layers.is_array()) throw ConfigError("Keras model config: no layer list (config.layers)");
  return {layers.begin(), layers.end()};
}

std::optional<OptimizerOptions> keras_file_optimizer(const KerasFile& file) {
  const auto& c = file.compile_config;
  if (!c.is_object()) return std::nullopt;
  const char* key = c.contains("optimizer") ? "optimizer" : "optimizer_config";
  if (!c.contains(key) || c[key].is_null()) return std::nullopt;
  try {
    return OptimizerOptions::from_keras(c[key]);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + " (" + (c.contains("optimizer") ? "compile_config" : "training_config") +
                      "): " + e.what());
  }
}

KerasFile read_keras_file(const std::string& path, const std::string& architecture_json,
                          const KerasWeightsBudget& budget) {
  if (is_tfjs_model(path)) {
    if (!architecture_json.empty()) throw ConfigError(path + ": a TF.js model.json holds its architecture; give none");
    return detail::read_tfjs_model(path, budget);
  }
#if TORCHFIT_HAVE_KERAS_IMPORT
  const std::string ext = lower_extension(path);
  if (ext == ".keras") {
    if (!architecture_json.empty()) throw ConfigError(path + ": a .keras file holds its architecture; give none");
    return read_keras_zip(path, budget);
  }
  if (ext == ".h5" || ext == ".hdf5") return read_h5(path, architecture_json, budget);
  throw IoError(path + ": not a Keras file (expected .h5, .hdf5 or .keras)");
#else
  (void)architecture_json;
  (void)budget;
  throw ConfigError(path +
                    ": this torchfit was built without the Keras readers (HDF5 and libzip): "
                    "apt-get install libhdf5-dev libzip-dev, then reconfigure with TORCHFIT_WITH_KERAS_IMPORT=ON");
#endif
}

}  // namespace torchfit::keras
