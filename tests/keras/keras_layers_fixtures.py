#!/usr/bin/python3
"""Keras models of the layers beyond 2-D images (Layers I), written with h5py in tf.keras 2's model.save
layout and as Keras 3 .keras zips, and their outputs from a float64 NumPy forward pass written from Keras's
layer definitions (tests/keras/keras_layers_import_test.cpp).

  keras_layers_fixtures.py OUT_DIR

Writes into OUT_DIR, for each fixture <stem>: <stem>.h5 (tf.keras 2.x; not for keras3-only ones),
<stem>.keras (Keras 3), <stem>.input.npy (float32, Keras's layout), <stem>.expected.npy (probabilities).
Fixtures:
  sequence   a (12, 3) sequence: Conv1D causal relu, GroupNormalization (2 groups), SpatialDropout1D,
             Dense over the steps (any rank), PReLU (shared_axes [1]), UnitNormalization, GlobalMaxPooling1D,
             GaussianNoise, Dense softmax
  image      an (8, 8, 3) image: Conv2D same, Activation swish, LayerNormalization, Dense over the
             channels, Activation gelu, GlobalAveragePooling2D, RepeatVector, Flatten, AlphaDropout,
             Dense softmax
  rms        Keras 3 only: a (6, 4) sequence, RMSNormalization, GlobalAveragePooling1D, Dense softmax
  embedding  6 indices (as float32): Embedding(10, 4) (tf.keras 2's input_length 6 in the .h5),
             GlobalAveragePooling1D, Dense softmax
  einsum     a (5, 3) sequence: EinsumDense "abc,cde->abde" (bias "de", relu), "abcd,cde->abe" (bias "e"),
             GlobalAveragePooling1D, EinsumDense "...b,bc->...c" softmax (Keras 3: lora_rank null)
  sequence_conv  an (11, 3) sequence: Conv1DTranspose (stride 2, same), SeparableConv1D (depth_multiplier
             2, relu), DepthwiseConv1D (stride 2, same, tanh), MaxPooling1D, AveragePooling1D (same),
             ZeroPadding1D, Cropping1D, UpSampling1D, GlobalAveragePooling1D, Dense softmax
  volume     a (5, 6, 6, 2) volume: Conv3D (stride 2, same, relu), Conv3DTranspose (stride 2), MaxPooling3D,
             ZeroPadding3D, Cropping3D, UpSampling3D, AveragePooling3D (same), SpatialDropout3D,
             GlobalMaxPooling3D, Dense softmax
  keras3_image  Keras 3 only: a (6, 6, 2) image: Resizing, AdaptiveAveragePooling2D, Flatten,
             ActivityRegularization, Dot (normalize) of two Dense branches, Concatenate, Dense softmax
  sequence_nd  a (9, 3) sequence, the same 1-D classes with other arguments: Conv1DTranspose (stride 2,
             same), SeparableConv1D (same, relu), DepthwiseConv1D (depth_multiplier 2, stride 2, same),
             MaxPooling1D (3, stride 2, same: a pad each side), AveragePooling1D (same, stride 2 on 5 steps),
             ZeroPadding1D, Cropping1D, UpSampling1D, Flatten, Dense softmax
  volume_same  a (5, 6, 6, 2) volume: Conv3D (stride 2, same, relu), Conv3DTranspose (same, kernel
             (2, 3, 3), strides (1, 2, 2)), ZeroPadding3D, Cropping3D, MaxPooling3D (same, stride 2),
             UpSampling3D (2, 1, 2), AveragePooling3D (valid, strides (2, 1, 3)), SpatialDropout3D, Flatten,
             GlobalAveragePooling3D, GlobalMaxPooling3D (of the Conv3D), Concatenate, Dense softmax
  merge      a (4, 3) sequence: two Dense branches (one through ActivityRegularization l1 and l2), Dot
             (axes -1, normalize) and Dot (axes [1, 1]), Flattens, Concatenate, Dense softmax
  adaptive   Keras 3 only: a (7, 9, 2) image, Reshaped to a (63, 2) sequence and a (7, 9, 2, 1) volume:
             AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D (uneven bins), Flattens,
             Concatenate, Dense softmax
  simple_rnn a (5, 3) sequence: SimpleRNN(4, return_sequences, go_backwards), SimpleRNN(3, relu), Dense
             softmax (Keras 3's weights under layers/simple_rnn/cell/vars, tf.keras 2's simple_rnn_cell names)
  lstm_gru   a (5, 3) sequence: LSTM(4, return_sequences, go_backwards), GRU(4, return_sequences, reset_after
             false), GRU(3, relu, reset_after), Dense softmax (Keras 3's weights under layers/<key>/cell/vars,
             tf.keras 2's lstm_cell / gru_cell names; GRU's bias (3u) and (2, 3u))
  wrappers   a (4, 5, 5, 2) sequence of images: TimeDistributed Conv2D (relu), MaxPooling2D, Flatten, then
             Bidirectional LSTM (return_sequences, concat), Bidirectional GRU (sum), Dense softmax (tf.keras 2's
             "<bi>/forward_lstm/lstm_cell/kernel:0" names; Keras 3's forward_layer/cell/vars, layer/vars)
  keras3_preprocessing, tf2_preprocessing  a (7, 8, 2) image: RandomFlip, CenterCrop, an adapted
             Normalization (its int64 count too) and a given one, Flatten, Dense softmax (.keras and .h5)
  keras3_augmentation, tf2_augmentation  a (9, 10, 3) image of 0-255 values through every augmentation layer
             that is the identity at inference (all but AutoContrast and RandomCrop), Keras 3's new ones too, Rescaling (1/127.5, offset -1), Resizing (bilinear, 6x7), Flatten, Dense
             softmax (.keras with Keras 3's classes and configs; .h5 with the classes tf.keras 2 has)
The convolutions, pools, resize, adaptive pooling and Dot from sequence_conv on are keras_layers_reference.py's
(TensorFlow's and Keras 3's rules in NumPy, written independently of torchfit).
"""
import io
import math
import os
import sys
import zipfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "layers", "reference"))
import keras_layers_reference as ref  # noqa: E402  (TensorFlow's convolution and pooling rules in NumPy)
from keras_fixtures import conv2d, graph_keras3, graph_tf2, layer_norm, relu, save_outputs  # noqa: E402

rng = np.random.default_rng(42)
ZEROS, GLOROT = {"class_name": "Zeros", "config": {}}, {"class_name": "GlorotUniform", "config": {"seed": None}}
# What Keras writes beside the arguments: initializers, and null regularizers and constraints.
CONV = dict(data_format="channels_last", groups=1, use_bias=True, kernel_initializer=GLOROT, bias_initializer=ZEROS,
            kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
            bias_constraint=None)
NORM = dict(beta_initializer=ZEROS, gamma_initializer={"class_name": "Ones", "config": {}}, beta_regularizer=None,
            gamma_regularizer=None, beta_constraint=None, gamma_constraint=None)


def conv1d_causal(x, k, dilation=1):
    """(N, L, C) causal cross-correlation with a (k, C_in, F) kernel: (k - 1) * d zeros before the steps."""
    kw = k.shape[0]
    x = np.pad(x, ((0, 0), ((kw - 1) * dilation, 0), (0, 0)))
    steps = x.shape[1] - (kw - 1) * dilation
    return np.stack([sum(x[:, t + i * dilation, :] @ k[i] for i in range(kw)) for t in range(steps)], axis=1)


def group_norm(x, groups, gamma, beta, eps):
    """Keras GroupNormalization on the last axis: mean and biased variance per group over the group's
    channels and every other non-batch axis."""
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(n, -1, groups, c // groups)
    mean, var = g.mean(axis=(1, 3), keepdims=True), g.var(axis=(1, 3), keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape) * gamma + beta


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def sequence(out):
    w = {"conv": [("kernel", rng.normal(0, 0.5, (3, 3, 6))), ("bias", rng.normal(0, 0.1, 6))],
         "gn": [("gamma", rng.uniform(0.5, 1.5, 6)), ("beta", rng.normal(0, 0.2, 6))],
         "steps": [("kernel", rng.normal(0, 0.4, (6, 5))), ("bias", rng.normal(0, 0.1, 5))],
         "prelu": [("alpha", rng.uniform(0.05, 0.4, (1, 5)))],
         "dense": [("kernel", rng.normal(0, 0.5, (5, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    specs = [("InputLayer", "img", dict(batch_input_shape=[None, 12, 3], dtype="float32", sparse=False,
                                        ragged=False), []),
             ("Conv1D", "conv", dict(CONV, filters=6, kernel_size=[3], strides=[1], padding="causal",
                                     dilation_rate=[1], activation="relu"), ["img"]),
             ("GroupNormalization", "gn", dict(NORM, groups=2, axis=-1, epsilon=0.001, center=True, scale=True), ["conv"]),
             ("SpatialDropout1D", "sdrop", dict(rate=0.3, seed=None), ["gn"]),
             ("Dense", "steps", dict(units=5, activation="linear", use_bias=True), ["sdrop"]),
             ("PReLU", "prelu", dict(alpha_initializer=ZEROS, alpha_regularizer=None, alpha_constraint=None,
                                      shared_axes=[1]), ["steps"]),
             ("UnitNormalization", "unit", dict(axis=-1), ["prelu"]),
             ("GlobalMaxPooling1D", "gmp", dict(data_format="channels_last", keepdims=False), ["unit"]),
             ("GaussianNoise", "noise", dict(stddev=0.5, seed=None), ["gmp"]),
             ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["noise"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 12, 3))
    h = relu(conv1d_causal(x, v["conv"][0]) + v["conv"][1])
    h = group_norm(h, 2, v["gn"][0], v["gn"][1], 0.001)
    h = h @ v["steps"][0] + v["steps"][1]
    h = np.maximum(h, 0) + v["prelu"][0] * np.minimum(h, 0)
    h = h / np.sqrt(np.maximum((h * h).sum(axis=-1, keepdims=True), 1e-12))
    logits = h.max(axis=1) @ v["dense"][0] + v["dense"][1]
    graph_tf2(out, w, "sequence", specs)
    graph_keras3(out, w, "sequence", specs)
    save_outputs(out, "sequence", x, logits)


def image(out):
    w = {"conv": [("kernel", rng.normal(0, 0.4, (3, 3, 3, 4))), ("bias", rng.normal(0, 0.1, 4))],
         "ln": [("gamma", rng.uniform(0.5, 1.5, 4)), ("beta", rng.normal(0, 0.2, 4))],
         "pointwise": [("kernel", rng.normal(0, 0.5, (4, 6))), ("bias", rng.normal(0, 0.1, 6))],
         "dense": [("kernel", rng.normal(0, 0.5, (2 * 6, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    specs = [("InputLayer", "img", dict(batch_input_shape=[None, 8, 8, 3], dtype="float32", sparse=False,
                                        ragged=False), []),
             ("Conv2D", "conv", dict(CONV, filters=4, kernel_size=[3, 3], strides=[1, 1], padding="same",
                                     dilation_rate=[1, 1], activation="linear"), ["img"]),
             ("Activation", "swish", dict(activation="swish"), ["conv"]),
             ("LayerNormalization", "ln", dict(axis=[3], epsilon=0.001, center=True, scale=True), ["swish"]),
             ("Dense", "pointwise", dict(units=6, activation="linear", use_bias=True), ["ln"]),
             ("Activation", "gelu", dict(activation="gelu"), ["pointwise"]),
             ("GlobalAveragePooling2D", "gap", dict(data_format="channels_last", keepdims=False), ["gelu"]),
             ("RepeatVector", "repeat", dict(n=2), ["gap"]),
             ("Flatten", "flat", dict(data_format="channels_last"), ["repeat"]),
             ("AlphaDropout", "adrop", dict(rate=0.2, noise_shape=None, seed=None), ["flat"]),
             ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["adrop"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.uniform(0, 1, (2, 8, 8, 3))
    h = conv2d(x, v["conv"][0], padding="same") + v["conv"][1]
    h = h / (1 + np.exp(-h))
    h = layer_norm(h, v["ln"][0], v["ln"][1], 0.001)
    h = gelu(h @ v["pointwise"][0] + v["pointwise"][1]).mean(axis=(1, 2))
    logits = np.concatenate([h, h], axis=1) @ v["dense"][0] + v["dense"][1]
    graph_tf2(out, w, "image", specs)
    graph_keras3(out, w, "image", specs)
    save_outputs(out, "image", x, logits)


def rms(out):
    w = {"rms": [("scale", rng.uniform(0.5, 1.5, 4))],
         "dense": [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    specs = [("InputLayer", "img", dict(batch_input_shape=[None, 6, 4], dtype="float32", sparse=False,
                                        ragged=False), []),
             ("RMSNormalization", "rms", dict(axis=-1, epsilon=1e-6), ["img"]),
             ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["rms"]),
             ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["gap"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 6, 4))
    h = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * v["rms"][0]
    graph_keras3(out, w, "rms", specs)
    save_outputs(out, "rms", x, h.mean(axis=1) @ v["dense"][0] + v["dense"][1])


def embedding(out):
    w = {"emb": [("embeddings", rng.normal(0, 1, (10, 4)))],
         "dense": [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    uniform = {"class_name": "RandomUniform", "config": {"minval": -0.05, "maxval": 0.05, "seed": None}}
    args = dict(input_dim=10, output_dim=4, embeddings_initializer=uniform, embeddings_regularizer=None,
                activity_regularizer=None, embeddings_constraint=None, mask_zero=False)

    def specs(emb_args):
        return [("InputLayer", "img", dict(batch_input_shape=[None, 6], dtype="float32", sparse=False,
                                            ragged=False), []),
                ("Embedding", "emb", emb_args, ["img"]),
                ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["emb"]),
                ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["gap"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.integers(0, 10, (2, 6)).astype(np.float64)
    h = v["emb"][0][x.astype(np.int64)].mean(axis=1)  # keras Embedding: ops.take(embeddings, cast(x, int32))
    graph_tf2(out, w, "embedding", specs(dict(args, input_length=6)))
    graph_keras3(out, w, "embedding", specs(args))
    save_outputs(out, "embedding", x, h @ v["dense"][0] + v["dense"][1])


def einsum(out):
    w = {"ed1": [("kernel", rng.normal(0, 0.5, (3, 2, 3))), ("bias", rng.normal(0, 0.1, (2, 3)))],
         "ed2": [("kernel", rng.normal(0, 0.5, (2, 3, 4))), ("bias", rng.normal(0, 0.1, 4))],
         "dense": [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    extra = dict(kernel_initializer=GLOROT, bias_initializer=ZEROS, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None)

    def specs(more):
        ed = lambda eq, shape, bias, act: dict(extra, equation=eq, output_shape=shape, bias_axes=bias, activation=act,
                                               **more)
        return [("InputLayer", "img", dict(batch_input_shape=[None, 5, 3], dtype="float32", sparse=False,
                                            ragged=False), []),
                ("EinsumDense", "ed1", ed("abc,cde->abde", [None, 2, 3], "de", "relu"), ["img"]),
                ("EinsumDense", "ed2", ed("abcd,cde->abe", [None, 4], "e", "linear"), ["ed1"]),
                ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["ed2"]),
                ("EinsumDense", "dense", ed("...b,bc->...c", [3], "c", "softmax"), ["gap"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 5, 3))
    h = relu(np.einsum("abc,cde->abde", x, v["ed1"][0]) + v["ed1"][1])  # Keras: ops.einsum + bias
    h = (np.einsum("abcd,cde->abe", h, v["ed2"][0]) + v["ed2"][1]).mean(axis=1)
    graph_tf2(out, w, "einsum", specs({}))
    graph_keras3(out, w, "einsum", specs(dict(lora_rank=None)))
    save_outputs(out, "einsum", x, np.einsum("...b,bc->...c", h, v["dense"][0]) + v["dense"][1])


def seq_conv_specs():
    """Keras 3 configs of the 1-D convolution and window layers of sequence_conv (input (11, 3))."""
    sep = {k: v for k, v in CONV.items() if not k.startswith("kernel_")}
    sep.update(depthwise_initializer=GLOROT, pointwise_initializer=GLOROT, depthwise_regularizer=None,
               pointwise_regularizer=None, depthwise_constraint=None, pointwise_constraint=None)
    dw = {k: v for k, v in sep.items() if not k.startswith("pointwise_")}
    return [("InputLayer", "img", dict(batch_input_shape=[None, 11, 3], dtype="float32", sparse=False,
                                       ragged=False), []),
            ("Conv1DTranspose", "up", dict(CONV, filters=4, kernel_size=[3], strides=[2], padding="same",
                                           output_padding=None, dilation_rate=[1], activation="linear"), ["img"]),
            ("SeparableConv1D", "sep", dict(sep, filters=5, kernel_size=[3], strides=[1], padding="valid",
                                            dilation_rate=[1], depth_multiplier=2, activation="relu"), ["up"]),
            ("DepthwiseConv1D", "dw", dict(dw, kernel_size=[3], strides=[2], padding="same", dilation_rate=[1],
                                           depth_multiplier=1, activation="tanh"), ["sep"]),
            ("MaxPooling1D", "mp", dict(pool_size=[2], strides=[2], padding="valid", data_format="channels_last"), ["dw"]),
            ("AveragePooling1D", "ap", dict(pool_size=[2], strides=[1], padding="same", data_format="channels_last"), ["mp"]),
            ("ZeroPadding1D", "zp", dict(padding=[1, 2], data_format="channels_last"), ["ap"]),
            ("Cropping1D", "cr", dict(cropping=[2, 1], data_format="channels_last"), ["zp"]),
            ("UpSampling1D", "us", dict(size=2), ["cr"]),
            ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["us"]),
            ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["gap"])]


def sequence_conv(out):
    """Conv1DTranspose, SeparableConv1D, DepthwiseConv1D and the 1-D pooling, padding, cropping and
    up-sampling layers; forward by keras_layers_reference's TensorFlow-rule convolutions and pools."""
    w = {"up": [("kernel", rng.normal(0, 0.5, (3, 4, 3))), ("bias", rng.normal(0, 0.1, 4))],
         "sep": [("depthwise_kernel", rng.normal(0, 0.5, (3, 4, 2))), ("pointwise_kernel", rng.normal(0, 0.5, (1, 8, 5))),
                 ("bias", rng.normal(0, 0.1, 5))],
         "dw": [("depthwise_kernel", rng.normal(0, 0.5, (3, 5, 1))), ("bias", rng.normal(0, 0.1, 5))],
         "dense": [("kernel", rng.normal(0, 0.5, (5, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 11, 3))
    h = ref.conv_transpose_nd(x, v["up"][0], [2], [1], "same", None) + v["up"][1]
    h = ref.depthwise_nd(h, v["sep"][0], [1], [1], "valid")
    h = np.maximum(ref.conv_nd(h, v["sep"][1], [1], [1], "valid") + v["sep"][2], 0)
    h = np.tanh(ref.depthwise_nd(h, v["dw"][0], [2], [1], "same") + v["dw"][1])
    h = ref.pool(ref.pool(h, [2], [2], "valid", "max"), [2], [1], "same", "avg")
    h = np.pad(h, ((0, 0), (1, 2), (0, 0)))[:, 2:-1]
    h = h.repeat(2, axis=1).mean(axis=1)
    graph_tf2(out, w, "sequence_conv", seq_conv_specs())
    graph_keras3(out, w, "sequence_conv", seq_conv_specs())
    save_outputs(out, "sequence_conv", x, h @ v["dense"][0] + v["dense"][1])


def volume_specs():
    """Keras 3 configs of the 3-D layers of volume (input (5, 6, 6, 2))."""
    cl = dict(data_format="channels_last")
    return [("InputLayer", "img", dict(batch_input_shape=[None, 5, 6, 6, 2], dtype="float32", sparse=False,
                                       ragged=False), []),
            ("Conv3D", "c3", dict(CONV, filters=3, kernel_size=[3, 3, 3], strides=[2, 2, 2], padding="same",
                                  dilation_rate=[1, 1, 1], activation="relu"), ["img"]),
            ("Conv3DTranspose", "t3", dict(CONV, filters=2, kernel_size=[2, 2, 2], strides=[2, 2, 2], padding="valid",
                                           output_padding=None, dilation_rate=[1, 1, 1], activation="linear"), ["c3"]),
            ("MaxPooling3D", "mp", dict(cl, pool_size=[2, 2, 2], strides=[2, 2, 2], padding="valid"), ["t3"]),
            ("ZeroPadding3D", "zp", dict(cl, padding=[[1, 0], [0, 1], [1, 1]]), ["mp"]),
            ("Cropping3D", "cr", dict(cl, cropping=[[0, 1], [1, 0], [1, 1]]), ["zp"]),
            ("UpSampling3D", "us", dict(cl, size=[1, 2, 1]), ["cr"]),
            ("AveragePooling3D", "ap", dict(cl, pool_size=[2, 2, 2], strides=[1, 2, 1], padding="same"), ["us"]),
            ("SpatialDropout3D", "sd", dict(cl, rate=0.3, seed=None), ["ap"]),
            ("GlobalMaxPooling3D", "gmp", dict(cl, keepdims=False), ["sd"]),
            ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["gmp"])]


def volume(out):
    """Conv3D, Conv3DTranspose and the 3-D pooling, padding, cropping, up-sampling and dropout layers."""
    w = {"c3": [("kernel", rng.normal(0, 0.4, (3, 3, 3, 2, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "t3": [("kernel", rng.normal(0, 0.5, (2, 2, 2, 2, 3))), ("bias", rng.normal(0, 0.1, 2))],
         "dense": [("kernel", rng.normal(0, 0.5, (2, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 5, 6, 6, 2))
    h = np.maximum(ref.conv_nd(x, v["c3"][0], [2, 2, 2], [1, 1, 1], "same") + v["c3"][1], 0)
    h = ref.conv_transpose_nd(h, v["t3"][0], [2, 2, 2], [1, 1, 1], "valid", None) + v["t3"][1]
    h = ref.pool(h, [2, 2, 2], [2, 2, 2], "valid", "max")
    h = np.pad(h, ((0, 0), (1, 0), (0, 1), (1, 1), (0, 0)))[:, 0:-1, 1:, 1:-1]
    h = ref.pool(h.repeat(2, axis=2), [2, 2, 2], [1, 2, 1], "same", "avg")
    graph_tf2(out, w, "volume", volume_specs())
    graph_keras3(out, w, "volume", volume_specs())
    save_outputs(out, "volume", x, h.max(axis=(1, 2, 3)) @ v["dense"][0] + v["dense"][1])


def keras3_image(out):
    """Keras 3 only: Resizing (bilinear, 6x6 -> 4x5), AdaptiveAveragePooling2D (2, 2), Flatten,
    ActivityRegularization (identity at inference), Dot (normalize) of two Dense branches, Concatenate."""
    w = {"d1": [("kernel", rng.normal(0, 0.5, (8, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "d2": [("kernel", rng.normal(0, 0.5, (8, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "dense": [("kernel", rng.normal(0, 0.5, (9, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    dense = dict(activation="linear", use_bias=True)
    specs = [("InputLayer", "img", dict(batch_input_shape=[None, 6, 6, 2], dtype="float32", sparse=False,
                                        ragged=False), []),
             ("Resizing", "rs", dict(height=4, width=5, interpolation="bilinear", crop_to_aspect_ratio=False,
                                     pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                                     antialias=False, data_format="channels_last"), ["img"]),
             ("AdaptiveAveragePooling2D", "ad", dict(output_size=[2, 2], data_format="channels_last"), ["rs"]),
             ("Flatten", "flat", dict(data_format="channels_last"), ["ad"]),
             ("ActivityRegularization", "act", dict(l1=0.01, l2=0.0), ["flat"]),
             ("Dense", "d1", dict(dense, units=3), ["act"]),
             ("Dense", "d2", dict(dense, units=3), ["act"]),
             ("Dot", "dot", dict(axes=1, normalize=True), ["d1", "d2"]),
             ("Concatenate", "cat", dict(axis=-1), ["act", "dot"]),
             ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["cat"])]
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.normal(0, 1, (2, 6, 6, 2))
    h = ref.adaptive_pool(ref.resizing(x, 4, 5, "bilinear", False, False, 0.0), [2, 2], "avg").reshape(2, -1)
    d = ref.dot(h @ v["d1"][0] + v["d1"][1], h @ v["d2"][0] + v["d2"][1], 1, True)
    graph_keras3(out, w, "keras3_image", specs)
    save_outputs(out, "keras3_image", x, np.concatenate([h, d], axis=1) @ v["dense"][0] + v["dense"][1])


# Keras 3's configs of the merged N-D classes (tuples as lists): transposed convolutions have no groups
# (tf.keras 2 also writes output_padding), depthwise and separable ones name their kernels.
CONV_T = dict({k: v for k, v in CONV.items() if k != "groups"}, output_padding=None)
DEPTHWISE = dict(data_format="channels_last", use_bias=True, depthwise_initializer=GLOROT, bias_initializer=ZEROS,
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None)
SEPARABLE = dict(DEPTHWISE, pointwise_initializer=GLOROT, pointwise_regularizer=None, pointwise_constraint=None)
FLAT = dict(data_format="channels_last")


def window(**c):
    """A convolution or pooling layer's window arguments as Keras writes them: every size a list."""
    return {k: (v if isinstance(v, (list, str)) else [v]) for k, v in c.items()}


def input_spec(shape):
    return ("InputLayer", "img", dict(batch_input_shape=[None] + shape, dtype="float32", sparse=False,
                                      ragged=False), [])


def weights_of(w):
    return {n: [a for _, a in ws] for n, ws in w.items()}


def flat(t):
    return t.reshape(t.shape[0], -1)  # Keras's Flatten: C order of the channels-last sample


def sequence_nd_specs():
    pool = dict(data_format="channels_last")
    return [input_spec([9, 3]),
            ("Conv1DTranspose", "deconv", dict(CONV_T, filters=4, activation="linear",
                                               **window(kernel_size=3, strides=2, padding="same", dilation_rate=1)),
             ["img"]),
            ("SeparableConv1D", "sep", dict(SEPARABLE, filters=5, depth_multiplier=2, activation="relu",
                                            **window(kernel_size=3, strides=1, padding="same", dilation_rate=1)),
             ["deconv"]),
            ("DepthwiseConv1D", "dw", dict(DEPTHWISE, depth_multiplier=2, activation="linear",
                                           **window(kernel_size=3, strides=2, padding="same", dilation_rate=1)),
             ["sep"]),
            ("MaxPooling1D", "mpool", dict(pool, **window(pool_size=3, strides=2, padding="same")), ["dw"]),
            ("AveragePooling1D", "apool", dict(pool, **window(pool_size=2, strides=2, padding="same")), ["mpool"]),
            ("ZeroPadding1D", "zpad", dict(padding=[1, 2], data_format="channels_last"), ["apool"]),
            ("Cropping1D", "crop", dict(cropping=[2, 1]), ["zpad"]),
            ("UpSampling1D", "up", dict(size=2), ["crop"]),
            ("Flatten", "flat", FLAT, ["up"]),
            ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["flat"])]


def sequence_nd(out):
    """The 1-D convolution, pooling, padding, cropping and upsampling classes on an odd-length sequence."""
    w = {"deconv": [("kernel", rng.normal(0, 0.5, (3, 4, 3))), ("bias", rng.normal(0, 0.1, 4))],
         "sep": [("depthwise_kernel", rng.normal(0, 0.5, (3, 4, 2))),
                 ("pointwise_kernel", rng.normal(0, 0.4, (1, 8, 5))), ("bias", rng.normal(0, 0.1, 5))],
         "dw": [("depthwise_kernel", rng.normal(0, 0.5, (3, 5, 2))), ("bias", rng.normal(0, 0.1, 10))],
         "dense": [("kernel", rng.normal(0, 0.3, (6 * 10, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 9, 3))
    h = ref.conv_transpose_nd(x, v["deconv"][0], [2], [1], "same", None) + v["deconv"][1]  # 9 -> 18
    h = ref.depthwise_nd(h, v["sep"][0], [1], [1], "same")                                 # depthwise, then
    h = relu(ref.conv_nd(h, v["sep"][1], [1], [1], "valid") + v["sep"][2])                 # pointwise + bias
    h = ref.depthwise_nd(h, v["dw"][0], [2], [1], "same") + v["dw"][1]                     # 18 -> 9, 10 ch
    h = ref.pool(h, [3], [2], "same", "max")                                               # 9 -> 5, pad (1, 1)
    h = ref.pool(h, [2], [2], "same", "avg")                                               # 5 -> 3, pad (0, 1)
    h = np.pad(h, ((0, 0), (1, 2), (0, 0)))                                                # 3 -> 6
    h = h[:, 2:h.shape[1] - 1].repeat(2, axis=1)                                           # 6 -> 3 -> 6
    specs = sequence_nd_specs()
    graph_tf2(out, w, "sequence_nd", specs)
    graph_keras3(out, w, "sequence_nd", specs)
    save_outputs(out, "sequence_nd", x, flat(h) @ v["dense"][0] + v["dense"][1])


def volume_same_specs():
    pool = dict(data_format="channels_last")
    return [input_spec([5, 6, 6, 2]),
            ("Conv3D", "conv", dict(CONV, filters=3, activation="relu",
                                    **window(kernel_size=[3, 3, 3], strides=[2, 2, 2], padding="same",
                                             dilation_rate=[1, 1, 1])), ["img"]),
            ("Conv3DTranspose", "deconv", dict(CONV_T, filters=2, activation="linear",
                                               **window(kernel_size=[2, 3, 3], strides=[1, 2, 2], padding="same",
                                                        dilation_rate=[1, 1, 1])), ["conv"]),
            ("ZeroPadding3D", "zpad", dict(padding=[[1, 0], [0, 1], [1, 1]], data_format="channels_last"),
             ["deconv"]),
            ("Cropping3D", "crop", dict(cropping=[[0, 1], [1, 0], [1, 2]], data_format="channels_last"), ["zpad"]),
            ("MaxPooling3D", "mpool", dict(pool, pool_size=[2, 2, 2], strides=[2, 2, 2], padding="same"), ["crop"]),
            ("UpSampling3D", "up", dict(size=[2, 1, 2], data_format="channels_last"), ["mpool"]),
            ("AveragePooling3D", "apool", dict(pool, pool_size=[2, 2, 3], strides=[2, 1, 3], padding="valid"),
             ["up"]),
            ("SpatialDropout3D", "sdrop", dict(rate=0.3, seed=None, data_format="channels_last"), ["apool"]),
            ("Flatten", "flat", FLAT, ["sdrop"]),
            ("GlobalAveragePooling3D", "gap", dict(data_format="channels_last", keepdims=False), ["sdrop"]),
            ("GlobalMaxPooling3D", "gmp", dict(data_format="channels_last", keepdims=False), ["conv"]),
            ("Concatenate", "cat", dict(axis=-1), ["flat", "gap", "gmp"]),
            ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["cat"])]


def volume_same(out):
    """The 3-D classes on a (5, 6, 6, 2) volume: odd depth, stride 2 'same' with the odd pad after."""
    w = {"conv": [("kernel", rng.normal(0, 0.3, (3, 3, 3, 2, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "deconv": [("kernel", rng.normal(0, 0.4, (2, 3, 3, 2, 3))), ("bias", rng.normal(0, 0.1, 2))],
         "dense": [("kernel", rng.normal(0, 0.4, (16 + 2 + 3, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 5, 6, 6, 2))
    a = relu(ref.conv_nd(x, v["conv"][0], [2, 2, 2], [1, 1, 1], "same") + v["conv"][1])          # (3, 3, 3, 3)
    h = ref.conv_transpose_nd(a, v["deconv"][0], [1, 2, 2], [1, 1, 1], "same", None) + v["deconv"][1]
    h = np.pad(h, ((0, 0), (1, 0), (0, 1), (1, 1), (0, 0)))                                      # (4, 7, 8, 2)
    h = h[:, 0:h.shape[1] - 1, 1:, 1:h.shape[3] - 2]                                             # (3, 6, 5, 2)
    h = ref.pool(h, [2, 2, 2], [2, 2, 2], "same", "max")                                         # (2, 3, 3, 2)
    h = h.repeat(2, axis=1).repeat(2, axis=3)                                                    # (4, 3, 6, 2)
    h = ref.pool(h, [2, 2, 3], [2, 1, 3], "valid", "avg")                                        # (2, 2, 2, 2)
    cat = np.concatenate([flat(h), h.mean(axis=(1, 2, 3)), a.max(axis=(1, 2, 3))], axis=1)
    specs = volume_same_specs()
    graph_tf2(out, w, "volume_same", specs)
    graph_keras3(out, w, "volume_same", specs)
    save_outputs(out, "volume_same", x, cat @ v["dense"][0] + v["dense"][1])



def merge_specs():
    dense = lambda units, act: dict(units=units, activation=act, use_bias=True)
    return [input_spec([4, 3]),
            ("Dense", "a", dense(5, "linear"), ["img"]),
            ("ActivityRegularization", "reg", dict(l1=0.01, l2=0.02), ["a"]),
            ("Dense", "b", dense(5, "tanh"), ["img"]),
            ("Dot", "dot_n", dict(axes=-1, normalize=True), ["reg", "b"]),
            ("Dot", "dot_r", dict(axes=[1, 1], normalize=False), ["reg", "b"]),
            ("Flatten", "fn", FLAT, ["dot_n"]),
            ("Flatten", "fr", FLAT, ["dot_r"]),
            ("Concatenate", "cat", dict(axis=-1), ["fn", "fr"]),
            ("Dense", "dense", dense(3, "softmax"), ["cat"])]


def merge(out):
    """Dot of two branches over the channels (axes -1, normalized: cosine similarities of the steps) and
    over the steps (axes [1, 1], raw), ActivityRegularization (identity at inference) on one branch."""
    w = {"a": [("kernel", rng.normal(0, 0.5, (3, 5))), ("bias", rng.normal(0, 0.1, 5))],
         "b": [("kernel", rng.normal(0, 0.5, (3, 5))), ("bias", rng.normal(0, 0.1, 5))],
         "dense": [("kernel", rng.normal(0, 0.3, (4 * 4 + 5 * 5, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 4, 3))
    a = x @ v["a"][0] + v["a"][1]
    b = np.tanh(x @ v["b"][0] + v["b"][1])
    dn = ref.dot(a, b, -1, True)      # (4, 4)
    dr = ref.dot(a, b, [1, 1], False)  # (5, 5)
    specs = merge_specs()
    graph_tf2(out, w, "merge", specs)
    graph_keras3(out, w, "merge", specs)
    save_outputs(out, "merge", x, np.concatenate([flat(dn), flat(dr)], axis=1) @ v["dense"][0] + v["dense"][1])


ADAPTIVE = [("AdaptiveAveragePooling1D", "seq", [5]), ("AdaptiveMaxPooling1D", "seq", [4]),
            ("AdaptiveAveragePooling2D", "img", [3, 4]), ("AdaptiveMaxPooling2D", "img", [4, 5]),
            ("AdaptiveAveragePooling3D", "vol", [2, 4, 2]), ("AdaptiveMaxPooling3D", "vol", [3, 4, 2])]


def adaptive_specs():
    specs = [input_spec([7, 9, 2]),
             ("Reshape", "seq", dict(target_shape=[63, 2]), ["img"]),
             ("Reshape", "vol", dict(target_shape=[7, 9, 2, 1]), ["img"])]
    for i, (cls, src, size) in enumerate(ADAPTIVE):
        specs.append((cls, "pool%d" % i, dict(output_size=size, data_format="channels_last"), [src]))
        specs.append(("Flatten", "flat%d" % i, FLAT, ["pool%d" % i]))
    return specs + [("Concatenate", "cat", dict(axis=-1), ["flat%d" % i for i in range(len(ADAPTIVE))]),
                    ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["cat"])]


def adaptive(out):
    """Keras 3 only: the six adaptive pooling classes on a (7, 9, 2) image, its (63, 2) sequence and its
    (7, 9, 2, 1) volume (Reshape in Keras's order), every output size dividing unevenly (overlapping bins)."""
    x = rng.normal(0, 1, (2, 7, 9, 2))
    src = {"seq": x.reshape(2, 63, 2), "img": x, "vol": x.reshape(2, 7, 9, 2, 1)}
    pooled = [flat(ref.adaptive_pool(src[s], size, "max" if "Max" in cls else "avg")) for cls, s, size in ADAPTIVE]
    cat = np.concatenate(pooled, axis=1)
    w = {"dense": [("kernel", rng.normal(0, 0.2, (cat.shape[1], 3))), ("bias", rng.normal(0, 0.1, 3))]}
    graph_keras3(out, w, "adaptive", adaptive_specs())
    v = weights_of(w)
    save_outputs(out, "adaptive", x, cat @ v["dense"][0] + v["dense"][1])


def rnn_cell_vars(path, keys):
    """Keras 3 saves an RNN's weights as its cell's: layers/<key>/cell/vars/<i>, layers/<key>/vars empty."""
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    buf = io.BytesIO(files["model.weights.h5"])
    with h5py.File(buf, "a") as f:
        for key in keys:
            f.move("layers/" + key + "/vars", "layers/" + key + "/cell/vars")
            f.create_group("layers/" + key + "/vars")
    files["model.weights.h5"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)


def simple_rnn(out):
    orth = {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": None}}
    common = dict(use_bias=True, kernel_initializer=GLOROT, recurrent_initializer=orth, bias_initializer=ZEROS,
                  kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                  recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                  return_state=False, stateful=False, unroll=False)
    w = {"rnn1": [("simple_rnn_cell/kernel", rng.normal(0, 0.5, (3, 4))),
                  ("simple_rnn_cell/recurrent_kernel", rng.normal(0, 0.5, (4, 4))),
                  ("simple_rnn_cell/bias", rng.normal(0, 0.1, 4))],
         "rnn2": [("simple_rnn_cell_1/kernel", rng.normal(0, 0.5, (4, 3))),
                  ("simple_rnn_cell_1/recurrent_kernel", rng.normal(0, 0.5, (3, 3))),
                  ("simple_rnn_cell_1/bias", rng.normal(0, 0.1, 3))],
         "dense": [("kernel", rng.normal(0, 0.5, (3, 3))), ("bias", rng.normal(0, 0.1, 3))]}

    def specs(extra):
        return [("InputLayer", "img", dict(batch_input_shape=[None, 5, 3], dtype="float32", sparse=False,
                                            ragged=False), []),
                ("SimpleRNN", "rnn1", dict(common, **extra, units=4, activation="tanh", return_sequences=True,
                                           go_backwards=True), ["img"]),
                ("SimpleRNN", "rnn2", dict(common, **extra, units=3, activation="relu", return_sequences=False,
                                           go_backwards=False), ["rnn1"]),
                ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["rnn2"])]
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 5, 3))
    h = ref.simple_rnn(x, *v["rnn1"], "tanh", True, True)
    h = ref.simple_rnn(h, *v["rnn2"], "relu", False, False)
    graph_tf2(out, w, "simple_rnn", specs(dict(time_major=False, activity_regularizer=None)))
    graph_keras3(out, w, "simple_rnn", specs(dict(seed=None, zero_output_for_mask=False)))
    rnn_cell_vars(os.path.join(out, "simple_rnn.keras"), ["simple_rnn", "simple_rnn_1"])
    save_outputs(out, "simple_rnn", x, h @ v["dense"][0] + v["dense"][1])


def lstm_gru(out):
    """LSTM(4, return_sequences, go_backwards) → GRU(4, return_sequences, reset_after false) → GRU(3, relu,
    reset_after) → Dense softmax over a (5, 3) sequence; Keras's layouts (LSTM gates i, f, c, o; GRU z, r, h, its
    bias (3u) or (2, 3u)), random weights, the NumPy cells of keras_layers_reference.py."""
    orth = {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": None}}
    common = dict(use_bias=True, kernel_initializer=GLOROT, recurrent_initializer=orth, bias_initializer=ZEROS,
                  kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                  recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                  return_state=False, stateful=False, unroll=False, recurrent_activation="sigmoid")
    w = {"lstm1": [("lstm_cell/kernel", rng.normal(0, 0.5, (3, 16))),
                   ("lstm_cell/recurrent_kernel", rng.normal(0, 0.5, (4, 16))),
                   ("lstm_cell/bias", rng.normal(0, 0.3, 16))],
         "gru1": [("gru_cell/kernel", rng.normal(0, 0.5, (4, 12))),
                  ("gru_cell/recurrent_kernel", rng.normal(0, 0.5, (4, 12))),
                  ("gru_cell/bias", rng.normal(0, 0.3, 12))],
         "gru2": [("gru_cell_1/kernel", rng.normal(0, 0.5, (4, 9))),
                  ("gru_cell_1/recurrent_kernel", rng.normal(0, 0.5, (3, 9))),
                  ("gru_cell_1/bias", rng.normal(0, 0.3, (2, 9)))],
         "dense": [("kernel", rng.normal(0, 0.5, (3, 3))), ("bias", rng.normal(0, 0.1, 3))]}

    def specs(extra):
        return [("InputLayer", "img", dict(batch_input_shape=[None, 5, 3], dtype="float32", sparse=False,
                                            ragged=False), []),
                ("LSTM", "lstm1", dict(common, **extra, units=4, activation="tanh", unit_forget_bias=True,
                                       return_sequences=True, go_backwards=True), ["img"]),
                ("GRU", "gru1", dict(common, **extra, units=4, activation="tanh", reset_after=False,
                                     return_sequences=True, go_backwards=False), ["lstm1"]),
                ("GRU", "gru2", dict(common, **extra, units=3, activation="relu", reset_after=True,
                                     return_sequences=False, go_backwards=False), ["gru1"]),
                ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["gru2"])]
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 5, 3))
    h = ref.lstm(x, *v["lstm1"], "tanh", "sigmoid", True, True)
    h = ref.gru(h, *v["gru1"], "tanh", "sigmoid", False, True, False)
    h = ref.gru(h, *v["gru2"], "relu", "sigmoid", True, False, False)
    graph_tf2(out, w, "lstm_gru", specs(dict(time_major=False, activity_regularizer=None, implementation=2)))
    graph_keras3(out, w, "lstm_gru", specs(dict(seed=None, zero_output_for_mask=False)))
    rnn_cell_vars(os.path.join(out, "lstm_gru.keras"), ["lstm", "gru", "gru_1"])
    save_outputs(out, "lstm_gru", x, h @ v["dense"][0] + v["dense"][1])


def wrapper_vars(path, moves):
    """Keras 3 saves a wrapper's weights as its layers': layers/<key>/<attr>/[cell/]vars/<i> (Bidirectional's
    forward_layer and backward_layer, TimeDistributed's layer), layers/<key>/vars empty. `moves`: per key, the
    folders that take its vars in order, with how many each holds."""
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    buf = io.BytesIO(files["model.weights.h5"])
    with h5py.File(buf, "a") as f:
        for key, folders in moves.items():
            own = "layers/" + key + "/vars"
            i = 0
            for folder, count in folders:
                g = f.create_group("layers/" + key + "/" + folder)
                for j in range(count):
                    f.move(own + "/" + str(i), g.name + "/" + str(j))
                    i += 1
                top = folder.split("/")[0]  # the wrapped layer's own (empty) vars beside its cell's
                if top + "/vars" != folder and "layers/" + key + "/" + top + "/vars" not in f:
                    f.create_group("layers/" + key + "/" + top + "/vars")
    files["model.weights.h5"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)


def wrappers(out):
    """A (4, 5, 5, 2) sequence of images: TimeDistributed(Conv2D(3, 3, relu)), TimeDistributed(MaxPooling2D(2)),
    TimeDistributed(Flatten), Bidirectional(LSTM(3, return_sequences)) (concat), Bidirectional(GRU(2)) (sum),
    Dense softmax. tf.keras 2: the wrapped layer's config under "layer" (the original name), weights
    "<td>/kernel:0" and "<bi>/forward_lstm/lstm_cell/kernel:0", …; Keras 3: "layer" the forward layer
    (forward_lstm) and "backward_layer" (backward_lstm, go_backwards), weights under layers/time_distributed/
    layer/vars and layers/bidirectional/forward_layer/cell/vars, backward_layer/cell/vars. NumPy: Keras 3's
    TimeDistributed.call (the layer per step) and Bidirectional.call (the backward sequence flipped back)."""
    orth = {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": None}}
    rnn = dict(use_bias=True, kernel_initializer=GLOROT, recurrent_initializer=orth, bias_initializer=ZEROS,
               kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
               recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
               return_state=False, stateful=False, unroll=False, recurrent_activation="sigmoid", activation="tanh")
    lstm = dict(rnn, units=3, unit_forget_bias=True, return_sequences=True)
    gru = dict(rnn, units=2, reset_after=True, return_sequences=False)
    cell = {"lstm": lambda d: [("%s_lstm/lstm_cell/kernel" % d, rng.normal(0, 0.5, (3, 12))),
                               ("%s_lstm/lstm_cell/recurrent_kernel" % d, rng.normal(0, 0.5, (3, 12))),
                               ("%s_lstm/lstm_cell/bias" % d, rng.normal(0, 0.3, 12))],
            "gru": lambda d: [("%s_gru/gru_cell/kernel" % d, rng.normal(0, 0.5, (6, 6))),
                              ("%s_gru/gru_cell/recurrent_kernel" % d, rng.normal(0, 0.5, (2, 6))),
                              ("%s_gru/gru_cell/bias" % d, rng.normal(0, 0.3, (2, 6)))]}
    w = {"td_conv": [("kernel", rng.normal(0, 0.4, (3, 3, 2, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "bi": cell["lstm"]("forward") + cell["lstm"]("backward"),
         "bi2": cell["gru"]("forward") + cell["gru"]("backward"),
         "dense": [("kernel", rng.normal(0, 0.5, (2, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    conv = dict(CONV, filters=3, kernel_size=[3, 3], strides=[1, 1], padding="valid", dilation_rate=[1, 1],
                activation="relu")
    pool = dict(pool_size=[2, 2], strides=[2, 2], padding="valid", data_format="channels_last")

    def specs(keras3, extra):
        dtype = ({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
                  "registered_name": None} if keras3 else "float32")

        def nested(cls, name, c, build):
            c = dict(c, name=name, trainable=True, dtype=dtype)
            if not keras3:
                return {"class_name": cls, "config": c}
            return {"module": "keras.layers", "class_name": cls, "config": c, "registered_name": None,
                    "build_config": {"input_shape": build}}

        def bi(cls, c, build):
            if not keras3:
                return {"layer": nested(cls, cls.lower(), dict(c, go_backwards=False), build)}
            return {"layer": nested(cls, "forward_" + cls.lower(), dict(c, go_backwards=False), build),
                    "backward_layer": nested(cls, "backward_" + cls.lower(), dict(c, go_backwards=True), build)}
        td = lambda cls, c, build: {"layer": nested(cls, cls.lower(), c, build)}
        return [("InputLayer", "img", dict(batch_input_shape=[None, 4, 5, 5, 2], dtype="float32", sparse=False,
                                            ragged=False), []),
                ("TimeDistributed", "td_conv", td("Conv2D", conv, [None, 5, 5, 2]), ["img"]),
                ("TimeDistributed", "td_pool", td("MaxPooling2D", pool, [None, 3, 3, 3]), ["td_conv"]),
                ("TimeDistributed", "td_flat", td("Flatten", dict(data_format="channels_last"), [None, 1, 1, 3]),
                 ["td_pool"]),
                ("Bidirectional", "bi", dict(bi("LSTM", dict(lstm, **extra), [None, 4, 3]), merge_mode="concat"),
                 ["td_flat"]),
                ("Bidirectional", "bi2", dict(bi("GRU", dict(gru, **extra), [None, 4, 6]), merge_mode="sum"),
                 ["bi"]),
                ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["bi2"])]
    v = weights_of(w)
    x = rng.normal(0, 1, (2, 4, 5, 5, 2))
    k, b = v["td_conv"]
    steps = [np.maximum(conv2d(x[:, t], k) + b, 0) for t in range(4)]  # (N, 3, 3, 3) each
    steps = [s[:, :2, :2].reshape(2, 1, 1, 2, 2, 3).max(axis=(3, 4)).reshape(2, 1, 1, 3) for s in steps]
    h = np.stack([s.reshape(2, -1) for s in steps], axis=1)  # (N, 4, 3)
    f, bw = v["bi"][:3], v["bi"][3:]
    h = np.concatenate([ref.lstm(h, *f, "tanh", "sigmoid", True, False),
                        ref.lstm(h, *bw, "tanh", "sigmoid", True, True)[:, ::-1]], axis=-1)  # (N, 4, 6)
    f, bw = v["bi2"][:3], v["bi2"][3:]
    h = ref.gru(h, *f, "tanh", "sigmoid", True, False, False) + ref.gru(h, *bw, "tanh", "sigmoid", True, False, True)
    graph_tf2(out, w, "wrappers", specs(False, dict(time_major=False, activity_regularizer=None, implementation=2)))
    graph_keras3(out, w, "wrappers", specs(True, dict(seed=None, zero_output_for_mask=False)))
    wrapper_vars(os.path.join(out, "wrappers.keras"),
                 {"time_distributed": [("layer/vars", 2)], "time_distributed_1": [("layer/vars", 0)],
                  "time_distributed_2": [("layer/vars", 0)],
                  "bidirectional": [("forward_layer/cell/vars", 3), ("backward_layer/cell/vars", 3)],
                  "bidirectional_1": [("forward_layer/cell/vars", 3), ("backward_layer/cell/vars", 3)]})
    save_outputs(out, "wrappers", x, h @ v["dense"][0] + v["dense"][1])


def keras3_preprocessing(out):
    """Keras 3 only: a (7, 8, 2) image through RandomFlip (the input at inference), CenterCrop (5, 6), an
    adapted Normalization (weights mean, variance and Keras's int64 count) and one with a given mean and
    variance, Flatten, Dense softmax."""
    x = rng.normal(0, 1, (2, 7, 8, 2))
    mean, var = rng.normal(0, 0.5, 2), rng.uniform(0.5, 2.0, 2)
    given_mean, given_var = [0.5, -0.5], [4.0, 0.25]
    w = {"norm": [("mean", mean), ("variance", var), ("count", np.array(96, dtype=np.int64))],
         "dense": [("kernel", rng.normal(0, 0.3, (60, 3))), ("bias", rng.normal(0, 0.1, 3))]}
    specs = [("InputLayer", "img", dict(batch_input_shape=[None, 7, 8, 2], dtype="float32", sparse=False,
                                        ragged=False), []),
             ("RandomFlip", "flip", dict(seed=5, mode="horizontal", data_format="channels_last"), ["img"]),
             ("CenterCrop", "crop", dict(height=5, width=6, data_format="channels_last"), ["flip"]),
             ("Normalization", "norm", dict(axis=[-1], invert=False, mean=None, variance=None), ["crop"]),
             ("Normalization", "given", dict(axis=[-1], invert=False, mean=given_mean, variance=given_var),
              ["norm"]),
             ("Flatten", "flat", dict(data_format="channels_last"), ["given"]),
             ("Dense", "dense", dict(units=3, activation="softmax", use_bias=True), ["flat"])]
    h = ref.run({"op": "center_crop", "x": x.transpose(0, 3, 1, 2), "height": 5, "width": 6}).transpose(0, 2, 3, 1)
    h = (h - mean) / np.maximum(np.sqrt(var), 1e-7)
    h = (h - np.array(given_mean)) / np.sqrt(np.array(given_var))
    graph_keras3(out, w, "keras3_preprocessing", specs)
    # tf.keras 2.x writes the same classes without data_format, the weights as norm/mean:0, variance:0, count:0.
    tf2 = [(c, n, {k: a for k, a in cfg.items() if k != "data_format"} if c != "Flatten" else cfg, i)
           for c, n, cfg, i in specs]
    graph_tf2(out, w, "tf2_preprocessing", tf2)
    v = weights_of(w)
    for stem in ("keras3_preprocessing", "tf2_preprocessing"):
        save_outputs(out, stem, x, h.reshape(2, -1) @ v["dense"][0] + v["dense"][1])


# Keras 3's augmentation layers with their get_config() keys (keras/src/layers/preprocessing/image_preprocessing),
# and the tf.keras 2.x subset (no RandomShear, RandomGrayscale; no data_format, RandomContrast without value_range).
AFFINE = dict(fill_mode="constant", interpolation="bilinear", seed=7, fill_value=0.0, data_format="channels_last")
AUGMENTATION = [("RandomFlip", "flip", dict(seed=3, mode="horizontal_and_vertical", data_format="channels_last")),
                ("RandomRotation", "rot", dict(AFFINE, factor=[-0.2, 0.3])),
                ("RandomZoom", "zoom", dict(AFFINE, height_factor=0.1, width_factor=[-0.2, 0.1])),
                ("RandomTranslation", "shift", dict(AFFINE, height_factor=0.1, width_factor=0.2, fill_mode="reflect")),
                ("RandomShear", "shear", dict(AFFINE, x_factor=0.2, y_factor=0.3, fill_mode="wrap")),
                ("RandomContrast", "contrast", dict(factor=0.3, value_range=[0, 255], seed=11)),
                ("RandomBrightness", "bright", dict(factor=[-0.2, 0.1], value_range=[0, 255], seed=13)),
                ("RandomGrayscale", "gray", dict(factor=0.5)),
                ("RandomHue", "hue", dict(factor=[0.0, 0.4], value_range=[0, 255], seed=17)),
                ("RandomSaturation", "sat", dict(factor=[0.3, 0.7], value_range=[0, 255], seed=19)),
                ("RandomColorJitter", "jitter", dict(value_range=[0, 255], brightness_factor=[-0.1, 0.1],
                                                     contrast_factor=[0.0, 0.2], saturation_factor=[0.4, 0.6],
                                                     hue_factor=None, seed=23)),
                ("RandomErasing", "erase", dict(factor=[0.0, 1.0], scale=[0.02, 0.33], fill_value=None,
                                                value_range=[0, 255], seed=29)),
                ("MixUp", "mixup", dict(alpha=0.2, seed=31)),
                ("CutMix", "cutmix", dict(factor=[0.0, 1.0], seed=37)),
                ("RandomColorDegeneration", "degen", dict(factor=[-0.5, 0.5], value_range=[0, 255], seed=41)),
                ("RandomSharpness", "sharp", dict(factor=[0.0, 0.5], value_range=[0, 255], seed=43)),
                ("RandomPosterization", "poster", dict(factor=[1, 8], value_range=[0, 255], seed=47)),
                ("Solarization", "solar", dict(value_range=[0, 255], addition_factor=[0.0, 0.1],
                                               threshold_factor=[0.0, 0.5], seed=53)),
                ("Equalization", "equal", dict(bins=256, value_range=[0, 255])),
                ("RandAugment", "randaug", dict(value_range=[0, 255], num_ops=2, factor=[0.0, 0.5],
                                                interpolation="bilinear", seed=59))]
# Keras 3 classes (tf.keras 2.x has none of them).
KERAS3_ONLY = ("RandomShear", "RandomGrayscale", "RandomHue", "RandomSaturation", "RandomColorJitter", "RandomErasing",
               "MixUp", "CutMix", "RandomColorDegeneration", "RandomSharpness", "RandomPosterization",
               "Solarization", "Equalization", "RandAugment")
TF2_KEYS = {"RandomContrast": {"factor", "seed"}}


def augmentation_specs(keras3):
    """The input, then the AUGMENTATION layers in a chain (tf.keras 2: its classes and keys only)."""
    layers = [("InputLayer", "img", dict(batch_input_shape=[None, 9, 10, 3], dtype="float32", sparse=False,
                                         ragged=False), [])]
    for cls, name, cfg in AUGMENTATION:
        if not keras3 and cls in KERAS3_ONLY:
            continue
        if not keras3:
            cfg = {k: a for k, a in cfg.items() if k != "data_format" and k in TF2_KEYS.get(cls, cfg)}
        layers.append((cls, name, cfg, [layers[-1][1]]))
    return layers


def keras3_augmentation(out):
    """Every augmentation layer between the input and Rescaling + Resizing (bilinear, 9x10 -> 6x7): at inference
    the model is Rescaling, Resizing, Flatten, Dense softmax, in both formats."""
    x = rng.uniform(0, 255, (2, 9, 10, 3))
    w = {"dense": [("kernel", rng.normal(0, 0.05, (6 * 7 * 3, 4))), ("bias", rng.normal(0, 0.1, 4))]}

    def specs(keras3):
        layers = augmentation_specs(keras3)
        resize = dict(height=6, width=7, interpolation="bilinear", crop_to_aspect_ratio=False)
        if keras3:
            resize.update(pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False,
                          data_format="channels_last")
        return layers + [("Rescaling", "scale", dict(scale=1 / 127.5, offset=-1.0), [layers[-1][1]]),
                         ("Resizing", "rs", resize, ["scale"]),
                         ("Flatten", "flat", dict(data_format="channels_last"), ["rs"]),
                         ("Dense", "dense", dict(units=4, activation="softmax", use_bias=True), ["flat"])]

    h = ref.resizing(x / 127.5 - 1.0, 6, 7, "bilinear", False, False, 0.0).reshape(2, -1)
    v = weights_of(w)
    graph_keras3(out, w, "keras3_augmentation", specs(True))
    graph_tf2(out, w, "tf2_augmentation", specs(False))
    for stem in ("keras3_augmentation", "tf2_augmentation"):
        save_outputs(out, stem, x, h @ v["dense"][0] + v["dense"][1])


if __name__ == "__main__":
    sequence(sys.argv[1])
    image(sys.argv[1])
    rms(sys.argv[1])
    embedding(sys.argv[1])
    einsum(sys.argv[1])
    sequence_conv(sys.argv[1])
    volume(sys.argv[1])
    keras3_image(sys.argv[1])
    sequence_nd(sys.argv[1])
    volume_same(sys.argv[1])
    merge(sys.argv[1])
    adaptive(sys.argv[1])
    simple_rnn(sys.argv[1])
    lstm_gru(sys.argv[1])
    wrappers(sys.argv[1])
    keras3_preprocessing(sys.argv[1])
    keras3_augmentation(sys.argv[1])
