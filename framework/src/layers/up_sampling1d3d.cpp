#include <torchfit/layers/up_sampling1d3d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

// Their shapes, repeat and ONNX Resize: UpSamplingLayer (base_up_sampling.cpp).
TORCHFIT_REGISTER_LAYER(UpSampling1D);
TORCHFIT_REGISTER_LAYER(UpSampling3D);

}  // namespace torchfit
