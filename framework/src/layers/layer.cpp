#include <torchfit/layers/layer.h>

#include <cctype>

namespace torchfit {

Layer::Layer(std::string class_name, std::string name)
    : torch::nn::Module(class_name), class_name_(std::move(class_name)), name_(std::move(name)) {}

Shape Layer::build(const Shape& input_shape) {
  if (built_) {
    if (input_shape != built_input_) {
      throw ConfigError(describe() + " was built for input " + format_shape(built_input_) +
                        " and cannot be rebuilt for " + format_shape(input_shape));
    }
    return built_output_;
  }
  for (auto d : input_shape) {
    if (d <= 0) throw ConfigError(describe() + ": invalid input shape " + format_shape(input_shape));
  }
  built_output_ = build_impl(input_shape);
  built_input_ = input_shape;
  built_ = true;
  return built_output_;
}

const Shape& Layer::input_shape() const {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  return built_input_;
}

const Shape& Layer::output_shape() const {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  return built_output_;
}

int64_t Layer::trainable_params() const {
  int64_t n = 0;
  for (const auto& p : parameters(/*recurse=*/true)) {
    if (p.requires_grad()) n += p.numel();
  }
  return n;
}

int64_t Layer::non_trainable_params() const {
  int64_t n = 0;
  for (const auto& p : parameters(true)) {
    if (!p.requires_grad()) n += p.numel();
  }
  for (const auto& b : buffers(true)) n += b.numel();
  return n;
}

int64_t Layer::count_params() const { return trainable_params() + non_trainable_params(); }

std::string Layer::describe() const {
  return "layer '" + (name_.empty() ? keras_snake_case(class_name_) : name_) + "' (" + class_name_ + ")";
}

nlohmann::json Layer::base_config() const {
  nlohmann::json c;
  c["name"] = name_;
  if (input_shape_) c["input_shape"] = *input_shape_;
  return c;
}

std::string keras_snake_case(const std::string& s) {
  // As Keras's generic_utils.to_snake_case: insert '_' before an upper-case letter that follows a
  // lower-case letter or digit... Keras: re.sub('(.)([A-Z][a-z]+)', r'\1_\2') then
  // re.sub('([a-z])([A-Z])', r'\1_\2') and lower(). "MaxPooling2D" → "max_pooling2d".
  std::string a;
  for (size_t i = 0; i < s.size(); ++i) {
    // step 1: (.)([A-Z][a-z]+)
    if (i > 0 && std::isupper(static_cast<unsigned char>(s[i])) && i + 1 < s.size() &&
        std::islower(static_cast<unsigned char>(s[i + 1]))) {
      a += '_';
    }
    a += s[i];
  }
  std::string b;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0 && std::islower(static_cast<unsigned char>(a[i - 1])) && std::isupper(static_cast<unsigned char>(a[i]))) {
      b += '_';
    }
    b += static_cast<char>(std::tolower(static_cast<unsigned char>(a[i])));
  }
  return b;
}

}  // namespace torchfit
