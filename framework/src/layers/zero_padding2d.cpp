#include <torchfit/layers/zero_padding2d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

// Its shapes, forward and ONNX node: EdgesLayer (base_edges.cpp).
TORCHFIT_REGISTER_LAYER(ZeroPadding2D);

}  // namespace torchfit
