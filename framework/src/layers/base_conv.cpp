#include <torchfit/layers/base_conv.h>

#include "layers/init.h"

namespace torchfit::detail {

void check_conv_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                        at::IntArrayRef dilation, const std::string& padding, const std::string& activation) {
  check_window_options(who, kernel, strides, dilation, padding);
  check_activation(activation, who);
}

std::array<int64_t, 2> conv_output_hw(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                      at::IntArrayRef strides, at::IntArrayRef dilation, const std::string& padding,
                                      std::vector<int64_t>& pad) {
  return window_output_2d(who, "kernel", in, kernel, strides, dilation, padding, pad);
}

at::Tensor conv2d_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                         at::IntArrayRef dilation, const std::vector<int64_t>& pad, int64_t groups,
                         bool contiguous_on_cpu) {
  if (contiguous_on_cpu && x.is_cpu() && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return conv2d_padded(x.contiguous(), kernel.contiguous(), bias, strides, dilation, pad, groups)
        .contiguous(at::MemoryFormat::ChannelsLast);
  }
  return conv2d_padded(x, kernel, bias, strides, dilation, pad, groups);
}

}  // namespace torchfit::detail
