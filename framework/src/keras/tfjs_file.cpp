#include "keras/tfjs_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <ATen/ATen.h>

#include <torchfit/error.h>

namespace torchfit::keras::detail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_manifest(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw IoError(file + ": cannot open the TF.js model.json");
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw IoError(file + ": not valid JSON");
  if (!j.contains("modelTopology") || !j["modelTopology"].is_object())
    throw IoError(file + ": no modelTopology (not a TF.js Layers model; a graph model is not read)");
  if (!j.contains("weightsManifest") || !j["weightsManifest"].is_array()) throw IoError(file + ": no weightsManifest");
  return j;
}

// A manifest group's shards, concatenated, after their sizes were checked against `declared` bytes.
std::string read_shards(const std::string& file, const fs::path& dir, const json& paths, uint64_t declared) {
  uint64_t on_disk = 0;
  std::error_code ec;
  for (const auto& p : paths) {
    const fs::path shard = dir / p.get<std::string>();
    const auto size = fs::file_size(shard, ec);
    if (ec) throw IoError(file + ": weight shard " + shard.string() + " is missing or unreadable");
    on_disk += size;
  }
  if (on_disk != declared) {
    throw IoError(file + ": the shards hold " + std::to_string(on_disk) + " bytes, the manifest declares " +
                  std::to_string(declared));
  }
  std::string data;
  for (const auto& p : paths) {
    std::ifstream in(dir / p.get<std::string>(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    data += ss.str();
  }
  if (data.size() != declared) throw IoError(file + ": the weight shards changed while being read");
  return data;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The weight specs of one manifest group with their bytes: float32 and int32, no quantization.
uint64_t declared_bytes(const std::string& file, const json& weights) {
  uint64_t total = 0;
  for (const auto& w : weights) {
    const std::string name = w.value("name", "?"), dtype = w.value("dtype", "float32");
    if (w.contains("quantization")) throw IoError(file + ": weight '" + name + "' is quantized (not read)");
    if (dtype != "float32" && dtype != "int32") {
      throw IoError(file + ": weight '" + name + "' is " + dtype + " (float32 and int32 are read)");
    }
    const auto shape = w.value("shape", std::vector<int64_t>{});
    for (int64_t d : shape)
      if (d < 0 || d > (int64_t{1} << 40)) throw IoError(file + ": weight '" + name + "' has a bad shape");
    total += static_cast<uint64_t>(element_count(shape)) * 4;
  }
  return total;
}

void add_weight(KerasFile& f, std::map<std::string, at::Tensor>& values, const json& w, const char* bytes) {
  const std::string name = w.at("name").get<std::string>();
  const auto shape = w.value("shape", std::vector<int64_t>{});
  const auto type = w.value("dtype", "float32") == "int32" ? at::kInt : at::kFloat;
  values[name] = at::from_blob(const_cast<char*>(bytes), shape, type).clone();
  const std::string layer = name.substr(0, name.find('/'));
  auto it = std::find_if(f.weights.begin(), f.weights.end(), [&](const auto& l) { return l.layer == layer; });
  if (it == f.weights.end()) it = f.weights.insert(f.weights.end(), KerasLayerWeights{layer, {}, {}, {}, {}});
  it->names.push_back(name);
  it->paths.push_back(name);
  it->shapes.push_back(shape);
  it->dtypes.push_back(type == at::kInt ? "int32" : "float32");
}

}  // namespace

KerasFile read_tfjs_model(const std::string& path, const KerasWeightsBudget& budget) {
  std::error_code ec;
  const std::string file = fs::is_directory(path, ec) ? (fs::path(path) / "model.json").string() : path;
  const json manifest = read_manifest(file);
  const json& topology = manifest["modelTopology"];
  KerasFile f;
  f.path = path;
  f.kind = "tfjs";
  f.keras_version = topology.value("keras_version", "");
  f.backend = topology.value("backend", "");
  f.model_config = topology.contains("model_config") ? topology["model_config"] : topology;
  const json& user = manifest.contains("userDefinedMetadata") ? manifest["userDefinedMetadata"] : json();
  if (user.is_object()) f.torchfit = TorchfitMetadata::from_json(user.value("torchfit", json()), file);
  if (!f.model_config.is_object() || !f.model_config.contains("class_name"))
    throw IoError(file + ": modelTopology holds no Keras model config");
  uint64_t total = 0;
  for (const auto& group : manifest["weightsManifest"]) total += declared_bytes(file, group.value("weights", json()));
  if (budget) {
    const uint64_t cap = budget(f);
    if (cap > 0 && total > cap)
      throw IoError(file + ": declares " + std::to_string(total) + " bytes of weights, more than the model can hold");
  }
  auto values = std::make_shared<std::map<std::string, at::Tensor>>();
  for (const auto& group : manifest["weightsManifest"]) {
    const json& weights = group.value("weights", json::array());
    const std::string data = read_shards(file, fs::path(file).parent_path(), group.value("paths", json::array()),
                                         declared_bytes(file, weights));
    size_t offset = 0;
    for (const auto& w : weights) {
      add_weight(f, *values, w, data.data() + offset);
      offset += static_cast<size_t>(element_count(w.value("shape", std::vector<int64_t>{}))) * 4;
    }
  }
  f.values = std::move(values);
  return f;
}

}  // namespace torchfit::keras::detail
