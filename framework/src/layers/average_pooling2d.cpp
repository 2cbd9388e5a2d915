#include <torchfit/layers/average_pooling2d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

// The mean, its "same" count of real pixels and the ONNX AveragePool: PoolingLayer (base_pooling.cpp).
TORCHFIT_REGISTER_LAYER(AveragePooling2D);

}  // namespace torchfit
