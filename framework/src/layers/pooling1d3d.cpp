#include <torchfit/layers/pooling1d3d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

// Their windows, padding, forward and ONNX nodes: PoolingLayer (base_pooling.cpp).
TORCHFIT_REGISTER_LAYER(MaxPooling1D);
TORCHFIT_REGISTER_LAYER(AveragePooling1D);
TORCHFIT_REGISTER_LAYER(MaxPooling3D);
TORCHFIT_REGISTER_LAYER(AveragePooling3D);

}  // namespace torchfit
