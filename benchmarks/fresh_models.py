"""The Keras builders of the benchmark's families held out in the round of 2026-11-28 (third session): written and
converted before that round's work on the laws began, measured only at its end (predict_accuracy.FRESH_FAMILIES).

* ``shufflenet_v2_05_128``: ShuffleNetV2 0.5x (channel split, channel shuffle by reshape-transpose-reshape,
  depthwise 3x3 units; as litert-torch converts torchvision's, in Keras);
* ``regnetx_200mf_128``: a RegNetX-200MF-like network (X blocks: 1x1, 3x3 grouped convolution of group width 8, 1x1,
  residual; widths 24-368);
* ``ds_cnn_kws_49x10``: the DS-CNN (L) keyword spotter of ARM's ML-KWS on a 49x10 MFCC input (10x4 stride-2 stem,
  five depthwise-separable blocks of 276 channels, average pool);
* ``blazeface_128``: a BlazeFace-like face detector (5x5 depthwise BlazeBlocks, residual max pools whose channels
  are zero-padded, two heads at 16x16 and 8x8), as MediaPipe's face detection is built.

Random weights (seeded by the caller); TensorFlow and Keras are imported by the caller's child process only.
"""

from __future__ import annotations

from typing import Any, Callable


def _bn_relu(L: Any, x: Any, act: bool = True) -> Any:
    x = L.BatchNormalization()(x)
    return L.ReLU()(x) if act else x


def shufflenet(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L, ops = keras.layers, keras.ops

    def shuffle(x: Any) -> Any:
        h, w, c = x.shape[1:]
        x = L.Reshape((h, w, 2, c // 2))(x)
        return L.Reshape((h, w, c))(L.Permute((1, 2, 4, 3))(x))

    def branch(x: Any, out: int, stride: int) -> Any:
        x = _bn_relu(L, L.Conv2D(out, 1, use_bias=False)(x))
        x = _bn_relu(L, L.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(x), act=False)
        return _bn_relu(L, L.Conv2D(out, 1, use_bias=False)(x))

    inp = keras.Input(shape, batch_size=1)
    x = L.MaxPooling2D(3, 2, padding="same")(_bn_relu(L, L.Conv2D(24, 3, strides=2, padding="same",
                                                                  use_bias=False)(inp)))
    for out, repeats in ((48, 4), (96, 8), (192, 4)):
        half = out // 2
        left = _bn_relu(L, L.DepthwiseConv2D(3, strides=2, padding="same", use_bias=False)(x), act=False)
        left = _bn_relu(L, L.Conv2D(half, 1, use_bias=False)(left))
        x = shuffle(L.Concatenate()([left, branch(x, half, 2)]))
        for _ in range(repeats - 1):
            a, b = ops.split(x, 2, axis=-1)
            x = shuffle(L.Concatenate()([a, branch(b, half, 1)]))
    x = L.GlobalAveragePooling2D()(_bn_relu(L, L.Conv2D(1024, 1, use_bias=False)(x)))
    return keras.Model(inp, L.Dense(1000)(x), name=name)


def regnetx(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers
    inp = keras.Input(shape, batch_size=1)
    x = _bn_relu(L, L.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(inp))
    for width, depth in ((24, 1), (56, 1), (152, 4), (368, 7)):
        for i in range(depth):
            stride = 2 if i == 0 else 1
            y = _bn_relu(L, L.Conv2D(width, 1, use_bias=False)(x))
            y = _bn_relu(L, L.Conv2D(width, 3, strides=stride, padding="same", groups=width // 8, use_bias=False)(y))
            y = _bn_relu(L, L.Conv2D(width, 1, use_bias=False)(y), act=False)
            skip = x if i else _bn_relu(L, L.Conv2D(width, 1, strides=stride, use_bias=False)(x), act=False)
            x = L.ReLU()(L.Add()([skip, y]))
    return keras.Model(inp, L.Dense(1000)(L.GlobalAveragePooling2D()(x)), name=name)


def ds_cnn(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers
    inp = keras.Input(shape, batch_size=1)
    x = _bn_relu(L, L.Conv2D(276, (10, 4), strides=(2, 1), padding="same")(inp))
    for _ in range(5):
        x = _bn_relu(L, L.DepthwiseConv2D(3, padding="same")(x))
        x = _bn_relu(L, L.Conv2D(276, 1)(x))
    x = L.Flatten()(L.AveragePooling2D(pool_size=x.shape[1:3])(x))
    return keras.Model(inp, L.Dense(12)(x), name=name)


def blazeface(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L, ops = keras.layers, keras.ops

    def blaze(x: Any, out: int, stride: int = 1, mid: int = 0) -> Any:
        y = L.DepthwiseConv2D(5, strides=stride, padding="same")(x)
        if mid:  # a double BlazeBlock: a second depthwise-separable pair through ``mid`` channels
            y = L.ReLU()(L.Conv2D(mid, 1)(y))
            y = L.DepthwiseConv2D(5, padding="same")(y)
        y = L.Conv2D(out, 1)(y)
        skip = L.MaxPooling2D(2)(x) if stride == 2 else x
        if out > x.shape[-1]:
            pad = out - x.shape[-1]
            skip = L.Lambda(lambda t: ops.pad(t, [[0, 0], [0, 0], [0, 0], [0, pad]]))(skip)
        return L.ReLU()(L.Add()([skip, y]))

    inp = keras.Input(shape, batch_size=1)
    x = L.ReLU()(L.Conv2D(24, 5, strides=2, padding="same")(inp))
    for out, stride in ((24, 1), (28, 1), (32, 2), (36, 1), (42, 1)):
        x = blaze(x, out, stride)
    x = blaze(x, 96, 2, mid=24)
    x = blaze(blaze(x, 96, 1, mid=24), 96, 1, mid=24)
    fine = x
    x = blaze(x, 96, 2, mid=24)
    x = blaze(blaze(x, 96, 1, mid=24), 96, 1, mid=24)
    heads = [L.Reshape((-1, n))(L.Conv2D(anchors * n, 1)(t)) for t, anchors in ((fine, 2), (x, 6)) for n in (1, 16)]
    scores = L.Concatenate(axis=1)([heads[0], heads[2]])
    boxes = L.Concatenate(axis=1)([heads[1], heads[3]])
    return keras.Model(inp, [scores, boxes], name=name)


BUILDERS: dict[str, Callable[[Any, tuple[int, ...], str], Any]] = {
    "shufflenet_v2_05_128": shufflenet, "regnetx_200mf_128": regnetx, "ds_cnn_kws_49x10": ds_cnn,
    "blazeface_128": blazeface}
