#include <torchfit/layers/activation.h>

#include <torchfit/layers/activation_fn.h>

namespace torchfit {

ActivationImpl::ActivationImpl(std::string activation, std::string name)
    : Layer("Activation", std::move(name)), activation_(std::move(activation)) {
  check_activation(activation_, describe());
}

Shape ActivationImpl::build_impl(const Shape& in) { return in; }

at::Tensor ActivationImpl::forward(const at::Tensor& x) { return apply_activation(activation_, x, false); }

nlohmann::json ActivationImpl::config() const {
  auto c = base_config();
  c["activation"] = activation_;
  return c;
}

}  // namespace torchfit
