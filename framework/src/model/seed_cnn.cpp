#include <torchfit/model/seed_cnn.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/max_pooling2d.h>

namespace torchfit {

Sequential seed_cnn(int64_t size, int64_t classes, int64_t dense2_units, int64_t channels) {
  Sequential model;
  model->add(Conv2D(Conv2DOptions(32, 3).activation("relu").input_shape(Shape{size, size, channels})));
  model->add(MaxPooling2D(MaxPooling2DOptions(2)));
  model->add(Conv2D(Conv2DOptions(64, 3).activation("relu")));
  model->add(MaxPooling2D(MaxPooling2DOptions(2)));
  model->add(Flatten());
  model->add(Dense(DenseOptions(512).activation("relu")));
  model->add(Dropout(DropoutOptions(0.2)));
  model->add(Dense(DenseOptions(dense2_units).activation("relu")));
  model->add(Dropout(DropoutOptions(0.2)));
  model->add(Dense(DenseOptions(classes).activation("softmax")));
  return model;
}

}  // namespace torchfit
