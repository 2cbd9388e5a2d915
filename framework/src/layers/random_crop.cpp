#include <torchfit/layers/random_crop.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomCropImpl::RandomCropImpl(RandomCropOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.height() <= 0 || options.width() <= 0) {
    throw ConfigError(describe() + ": height and width must be > 0, got " + std::to_string(options.height()) + " and " +
                      std::to_string(options.width()));
  }
  smart_resize_ = std::make_shared<ResizingImpl>(
      ResizingOptions(options.height(), options.width()).crop_to_aspect_ratio(true).name(name() + "_smart_resize"));
  resize_ = std::make_shared<ResizingImpl>(ResizingOptions(options.height(), options.width()).name(name() + "_resize"));
}

Shape RandomCropImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  smart_resize_->build(in);  // its ONNX export takes the built size
  return {options.height(), options.width(), in[2]};
}

std::pair<int64_t, int64_t> RandomCropImpl::draw_window(int64_t h, int64_t w, const at::Tensor& like) const {
  const int64_t th = options.height(), tw = options.width();
  if (h > th && w > tw) {
    const at::Tensor u = at::rand({2}, at::kDouble);  // the CPU generator, as uniform_draws: no device sync
    return {static_cast<int64_t>(u[0].item<double>() * static_cast<double>(h - th + 1)),
            static_cast<int64_t>(u[1].item<double>() * static_cast<double>(w - tw + 1))};
  }
  // Keras 3's get_random_transformation otherwise: int(float(w * height) / width), as it computes them.
  const int64_t rows = std::max<int64_t>(std::min(h, static_cast<int64_t>(static_cast<double>(w * th) / tw)), 1);
  const int64_t cols = std::max<int64_t>(std::min(w, static_cast<int64_t>(static_cast<double>(h * tw) / th)), 1);
  return {(h - rows) / 2, (w - cols) / 2};
}

at::Tensor RandomCropImpl::crop_at(const at::Tensor& x, int64_t top, int64_t left) const {
  const int64_t bottom = std::min(x.size(2), top + options.height()),
                right = std::min(x.size(3), left + options.width());
  const at::Tensor y = x.slice(2, top, bottom).slice(3, left, right);
  if (y.size(2) == options.height() && y.size(3) == options.width()) return y;
  return resize_->forward(y);
}

at::Tensor RandomCropImpl::forward(const at::Tensor& x) {
  if (!is_training()) return smart_resize_->forward(x);
  const auto [top, left] = draw_window(x.size(2), x.size(3), x);
  return crop_at(x, top, left);
}

std::string RandomCropImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return smart_resize_->export_onnx(g, in);
}

TORCHFIT_REGISTER_LAYER(RandomCrop);

}  // namespace torchfit
