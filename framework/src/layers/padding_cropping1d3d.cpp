#include <torchfit/layers/padding_cropping1d3d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

// Their shapes, forward and ONNX nodes: EdgesLayer (base_edges.cpp).
TORCHFIT_REGISTER_LAYER(ZeroPadding1D);
TORCHFIT_REGISTER_LAYER(ZeroPadding3D);
TORCHFIT_REGISTER_LAYER(Cropping1D);
TORCHFIT_REGISTER_LAYER(Cropping3D);

}  // namespace torchfit
