#include <torchfit/layers/flatten.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

FlattenImpl::FlattenImpl(FlattenOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

Shape FlattenImpl::build_impl(const Shape& in) { return {shape_numel(in)}; }

at::Tensor FlattenImpl::forward(const at::Tensor& x) { return x.flatten(1); }

nlohmann::json FlattenImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(Flatten);

}  // namespace torchfit
