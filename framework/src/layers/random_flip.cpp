#include <torchfit/layers/random_flip.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomFlipImpl::RandomFlipImpl(RandomFlipOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const std::string& m = options.mode();
  if (m != "horizontal" && m != "vertical" && m != "horizontal_and_vertical") {
    throw ConfigError(describe() + ": mode must be 'horizontal', 'vertical' or 'horizontal_and_vertical', got '" + m +
                      "'");
  }
}

Shape RandomFlipImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  return in;
}

at::Tensor RandomFlipImpl::forward(const at::Tensor& x) {
  if (!is_training()) return x;
  const at::Tensor flips = at::rand({x.size(0), 1, 1, 1}, x.options().dtype(at::kFloat)) <= 0.5;
  at::Tensor y = x;
  if (options.mode() != "vertical") y = at::where(flips, y.flip({3}), y);
  if (options.mode() != "horizontal") y = at::where(flips, y.flip({2}), y);
  return y;
}

std::string RandomFlipImpl::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

TORCHFIT_REGISTER_LAYER(RandomFlip);

}  // namespace torchfit
