#!/usr/bin/env python3
"""Writes the functional model configs that ship next to seed_cnn.json, in tf.keras 2.x's own
model.to_json() layout (class_name "Functional", inbound_nodes lists, input_layers/output_layers):

  resnet8.json          CIFAR-style ResNet-8 (MLCommons Tiny's image-classification model: three
                        residual stacks of 16, 32, 64 filters, L2(1e-4) kernels), 78,666 parameters
                        for 32x32x3 inputs and 10 classes.
  mobilenetv2_tiny.json a small MobileNetV2-style model: inverted residual blocks (1x1 expansion,
                        ReLU(6), ZeroPadding2D + strided DepthwiseConv2D, linear 1x1 projection, Add
                        where the shape is kept), GlobalAveragePooling2D, Dropout, Dense.
  fashion_two_heads.json a small CNN with two outputs for Fashion-MNIST (28x28x1): "cls", the 10 classes
                        (softmax), and "footwear", sandal/sneaker/ankle boot or not (sigmoid), on one trunk;
                        fit_arrays trains it with a loss per output and loss_weights (docs/training.md).
  fashion_unet.json     a small U-Net for Fashion-MNIST's garment masks (28x28x1 -> 28x28x2 softmax): two
                        Conv2D/MaxPooling2D stages down, UpSampling2D and Conv2DTranspose up, each joined
                        to its encoder stage by Concatenate (docs/training.md, "Segmentation").
  keras3_recipe.json    Keras's "Image classification from scratch" recipe (keras.io/examples/vision/
                        image_classification_from_scratch, Keras 3): RandomFlip("horizontal") and
                        RandomRotation(0.1) inside the model, Rescaling(1/255), the small Xception-style net
                        (Conv2D 128/2, residual blocks of SeparableConv2D 256, 512, 728 with strided 1x1
                        Conv2D shortcuts, SeparableConv2D 1024, GlobalAveragePooling2D, Dropout 0.25), for
                        raw 0-255 pixels as image_dataset_from_directory yields them.
  convnext_block.json   a ConvNeXt-style model: a 4x4/4 stem with LayerNormalization, two blocks of
                        DepthwiseConv2D 7x7 -> LayerNormalization -> Dense 4x (GELU) -> Dense over the
                        channels with a residual Add, GlobalAveragePooling2D, LayerNormalization, Dense.

Usage: scripts/model_configs.py OUT_DIR   (plain Python 3, no packages needed)
train_cnn --model-config sets the input size and the last Dense layer's units from the data.
"""
import json
import os
import sys


class Graph:
    def __init__(self, name, input_shape):
        self.name, self.layers, self.counts = name, [], {}
        self.input = self._add("InputLayer", {"batch_input_shape": [None, *input_shape], "dtype": "float32",
                                              "sparse": False, "ragged": False}, [], "input_1")

    def _add(self, cls, config, inbound, name=None):
        if name is None:
            base = "re_lu" if cls == "ReLU" else "".join("_" + c.lower() if c.isupper() else c for c in cls)
            base = base.lstrip("_").replace("2_d", "2d")  # Keras's names: conv2d, re_lu, zero_padding2d
            n = self.counts.get(base, 0)
            self.counts[base] = n + 1
            name = base if n == 0 else f"{base}_{n}"
        config = {"name": name, "trainable": True, "dtype": "float32", **config}
        nodes = [[[src, 0, 0, {}] for src in inbound]] if inbound else []
        self.layers.append({"class_name": cls, "config": config, "name": name, "inbound_nodes": nodes})
        return name

    def __call__(self, cls, inbound, name=None, **config):
        return self._add(cls, config, inbound if isinstance(inbound, list) else [inbound], name)

    def to_json(self, output):
        outputs = output if isinstance(output, list) else [output]
        return {"class_name": "Functional",
                "config": {"name": self.name, "layers": self.layers,
                           "input_layers": [[self.input, 0, 0]], "output_layers": [[o, 0, 0] for o in outputs]},
                "keras_version": "2.4.0", "backend": "tensorflow"}


L2 = {"class_name": "L2", "config": {"l2": 1e-4}}


def conv(g, x, filters, kernel, strides=1, padding="same", bias=True, l2=False, activation="linear"):
    cfg = dict(filters=filters, kernel_size=[kernel, kernel], strides=[strides, strides], padding=padding,
               data_format="channels_last", dilation_rate=[1, 1], groups=1, activation=activation,
               use_bias=bias, kernel_initializer={"class_name": "HeNormal", "config": {"seed": None}},
               bias_initializer={"class_name": "Zeros", "config": {}},
               kernel_regularizer=L2 if l2 else None, bias_regularizer=None, activity_regularizer=None,
               kernel_constraint=None, bias_constraint=None)
    return g("Conv2D", x, **cfg)


def bn(g, x):
    return g("BatchNormalization", x, axis=[3], momentum=0.99, epsilon=0.001, center=True, scale=True)


def relu(g, x):
    return g("Activation", x, activation="relu")


def relu6(g, x):
    return g("ReLU", x, max_value=6.0, negative_slope=0.0, threshold=0.0)


def resnet8(classes=10):
    g = Graph("resnet8", [32, 32, 3])
    x = relu(g, bn(g, conv(g, g.input, 16, 3, l2=True)))
    for filters, strides in ((16, 1), (32, 2), (64, 2)):
        y = relu(g, bn(g, conv(g, x, filters, 3, strides, l2=True)))
        y = bn(g, conv(g, y, filters, 3, 1, l2=True))
        shortcut = x if strides == 1 else conv(g, x, filters, 1, strides, l2=True)
        x = relu(g, g("Add", [shortcut, y]))
    x = g("AveragePooling2D", x, pool_size=[8, 8], strides=[8, 8], padding="valid", data_format="channels_last")
    x = g("Flatten", x, data_format="channels_last")
    out = g("Dense", x, units=classes, activation="softmax", use_bias=True)
    return g.to_json(out)


def inverted_residual(g, x, in_channels, expansion, out_channels, strides):
    y = x
    if expansion != 1:
        y = relu6(g, bn(g, conv(g, y, in_channels * expansion, 1, bias=False)))
    if strides == 2:  # MobileNetV2 pads explicitly (correct_pad) and convolves 'valid'
        y = g("ZeroPadding2D", y, padding=[[0, 1], [0, 1]], data_format="channels_last")
    y = g("DepthwiseConv2D", y, kernel_size=[3, 3], strides=[strides, strides],
          padding="valid" if strides == 2 else "same", depth_multiplier=1, data_format="channels_last",
          dilation_rate=[1, 1], activation="linear", use_bias=False)
    y = relu6(g, bn(g, y))
    y = bn(g, conv(g, y, out_channels, 1, bias=False))  # linear bottleneck
    if strides == 1 and in_channels == out_channels:
        y = g("Add", [x, y])
    return y


def mobilenetv2_tiny(classes=10):
    g = Graph("mobilenetv2_tiny", [32, 32, 3])
    x = relu6(g, bn(g, conv(g, g.input, 16, 3, 2, bias=False)))
    channels = 16
    for expansion, out_channels, strides in ((1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1)):
        x = inverted_residual(g, x, channels, expansion, out_channels, strides)
        channels = out_channels
    x = relu6(g, bn(g, conv(g, x, 128, 1, bias=False)))
    x = g("GlobalAveragePooling2D", x, data_format="channels_last")
    x = g("Dropout", x, rate=0.2)
    out = g("Dense", x, units=classes, activation="softmax", use_bias=True)
    return g.to_json(out)


def convnext_block(classes=10, width=32, blocks=2):
    g = Graph("convnext_block", [32, 32, 3])
    norm = dict(axis=-1, epsilon=1e-6, center=True, scale=True)
    x = conv(g, g.input, width, 4, 4, padding="valid")
    x = g("LayerNormalization", x, **norm)
    for _ in range(blocks):
        y = g("DepthwiseConv2D", x, kernel_size=[7, 7], strides=[1, 1], padding="same", depth_multiplier=1,
              data_format="channels_last", dilation_rate=[1, 1], activation="linear", use_bias=True)
        y = g("LayerNormalization", y, **norm)
        y = g("Dense", y, units=4 * width, activation="gelu", use_bias=True)
        y = g("Dense", y, units=width, activation="linear", use_bias=True)
        x = g("Add", [x, y])
    x = g("GlobalAveragePooling2D", x, data_format="channels_last")
    x = g("LayerNormalization", x, **norm)
    out = g("Dense", x, units=classes, activation="softmax", use_bias=True)
    return g.to_json(out)


def separable(g, x, filters):
    return g("SeparableConv2D", x, filters=filters, kernel_size=[3, 3], strides=[1, 1], padding="same",
             data_format="channels_last", dilation_rate=[1, 1], depth_multiplier=1, activation="linear",
             use_bias=True)


def keras3_recipe(classes=10):
    """keras.io's make_model(), Keras 3 version, with its data_augmentation_layers put into the model
    (the tutorial's "option 1": augmentation on the model's device, identity in inference)."""
    g = Graph("keras3_recipe", [32, 32, 3])
    x = g("RandomFlip", g.input, mode="horizontal", seed=None)
    x = g("RandomRotation", x, factor=0.1, fill_mode="reflect", interpolation="bilinear", seed=None,
          fill_value=0.0)
    x = g("Rescaling", x, scale=1.0 / 255, offset=0.0)
    x = relu(g, bn(g, conv(g, x, 128, 3, 2)))
    previous = x
    for size in (256, 512, 728):
        x = bn(g, separable(g, relu(g, x), size))
        x = bn(g, separable(g, relu(g, x), size))
        x = g("MaxPooling2D", x, pool_size=[3, 3], strides=[2, 2], padding="same", data_format="channels_last")
        residual = conv(g, previous, size, 1, 2)
        x = previous = g("Add", [x, residual])
    x = relu(g, bn(g, separable(g, x, 1024)))
    x = g("GlobalAveragePooling2D", x, data_format="channels_last")
    x = g("Dropout", x, rate=0.25)
    out = g("Dense", x, units=classes, activation="softmax", use_bias=True)
    return g.to_json(out)


def dense(g, x, units, activation, name=None):
    return g("Dense", x, name=name, units=units, activation=activation, use_bias=True,
             kernel_initializer={"class_name": "GlorotUniform", "config": {"seed": None}},
             bias_initializer={"class_name": "Zeros", "config": {}})


def fashion_two_heads():
    g = Graph("fashion_two_heads", [28, 28, 1])
    x = conv(g, g.input, 16, 3, activation="relu")
    x = g("MaxPooling2D", x, pool_size=[2, 2], strides=[2, 2], padding="valid", data_format="channels_last")
    x = conv(g, x, 32, 3, activation="relu")
    x = g("MaxPooling2D", x, pool_size=[2, 2], strides=[2, 2], padding="valid", data_format="channels_last")
    x = g("Flatten", x, data_format="channels_last")
    x = dense(g, x, 64, "relu", name="features")
    return g.to_json([dense(g, x, 10, "softmax", name="cls"), dense(g, x, 1, "sigmoid", name="footwear")])


def fashion_unet():
    g = Graph("fashion_unet", [28, 28, 1])
    pool = dict(pool_size=[2, 2], strides=[2, 2], padding="valid", data_format="channels_last")
    enc1 = conv(g, g.input, 16, 3, activation="relu")
    enc2 = conv(g, g("MaxPooling2D", enc1, **pool), 32, 3, activation="relu")
    bottom = conv(g, g("MaxPooling2D", enc2, **pool), 64, 3, activation="relu")
    up2 = g("UpSampling2D", bottom, size=[2, 2], data_format="channels_last", interpolation="nearest")
    dec2 = conv(g, g("Concatenate", [up2, enc2], axis=-1), 32, 3, activation="relu")
    up1 = g("Conv2DTranspose", dec2, filters=16, kernel_size=[2, 2], strides=[2, 2], padding="same",
            output_padding=None, data_format="channels_last", dilation_rate=[1, 1], activation="relu",
            use_bias=True, kernel_initializer={"class_name": "HeNormal", "config": {"seed": None}},
            bias_initializer={"class_name": "Zeros", "config": {}}, kernel_regularizer=None,
            bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None)
    dec1 = conv(g, g("Concatenate", [up1, enc1], axis=-1), 16, 3, activation="relu")
    return g.to_json(g("Conv2D", dec1, name="mask", filters=2, kernel_size=[1, 1], strides=[1, 1], padding="same",
                       data_format="channels_last", dilation_rate=[1, 1], groups=1, activation="softmax",
                       use_bias=True, kernel_initializer={"class_name": "GlorotUniform", "config": {"seed": None}},
                       bias_initializer={"class_name": "Zeros", "config": {}}, kernel_regularizer=None,
                       bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                       bias_constraint=None))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, model in (("resnet8.json", resnet8()), ("mobilenetv2_tiny.json", mobilenetv2_tiny()),
                        ("convnext_block.json", convnext_block()), ("keras3_recipe.json", keras3_recipe()),
                        ("fashion_two_heads.json", fashion_two_heads()),
                        ("fashion_unet.json", fashion_unet())):
        path = os.path.join(sys.argv[1], name)
        with open(path + ".tmp", "w") as f:
            json.dump(model, f, indent=1)
            f.write("\n")
        os.replace(path + ".tmp", path)
        print("wrote", path)


if __name__ == "__main__":
    main()
