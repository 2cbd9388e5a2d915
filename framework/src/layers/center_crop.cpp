#include <torchfit/layers/center_crop.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

CenterCropImpl::CenterCropImpl(CenterCropOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.height() <= 0 || options.width() <= 0) {
    throw ConfigError(describe() + ": height and width must be > 0, got " + std::to_string(options.height()) + " and " +
                      std::to_string(options.width()));
  }
  resize_ = std::make_shared<ResizingImpl>(
      ResizingOptions(options.height(), options.width()).crop_to_aspect_ratio(true).name(name() + "_smart_resize"));
}

bool CenterCropImpl::smaller(int64_t h, int64_t w) const { return h < options.height() || w < options.width(); }

Shape CenterCropImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  if (smaller(in[0], in[1])) resize_->build(in);  // its ONNX export takes the built size
  return {options.height(), options.width(), in[2]};
}

at::Tensor CenterCropImpl::forward(const at::Tensor& x) {
  if (smaller(x.size(2), x.size(3))) return resize_->forward(x);
  const int64_t top = (x.size(2) - options.height()) / 2, left = (x.size(3) - options.width()) / 2;
  return x.slice(2, top, top + options.height()).slice(3, left, left + options.width());
}

std::string CenterCropImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const Shape& i = input_shape();
  if (smaller(i[0], i[1])) return resize_->export_onnx(g, in);
  using detail::onnx_name;
  const int64_t top = (i[0] - options.height()) / 2, left = (i[1] - options.width()) / 2;
  return g.add_node("Slice",
                    {in[0], g.add_int64s(onnx_name(*this, "starts"), {top, left}),
                     g.add_int64s(onnx_name(*this, "ends"), {top + options.height(), left + options.width()}),
                     g.add_int64s(onnx_name(*this, "axes"), {2, 3})},
                    {}, onnx_name(*this, "crop"));
}

TORCHFIT_REGISTER_LAYER(CenterCrop);

}  // namespace torchfit
