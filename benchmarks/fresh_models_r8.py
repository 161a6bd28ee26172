"""The Keras builders of the benchmark's families held out for the round after 2026-12-07 (issue 43): written and
converted before any change of that round's laws, measured only once, at its end (predict_accuracy.FRESH_FAMILIES).
The kinds of model people ship that the project had never built:

* ``conformer_4x144_t200``: a Conformer speech encoder on 200 log-mel frames of 80 bins (two stride-2 3x3
  convolutions, 50 frames of d=144; four blocks: half feed-forward, multi-head self-attention, a convolution module
  of pointwise GLU, depthwise 15-tap 1-D convolution, batch norm and swish, half feed-forward, layer norm);
* ``audio_tagger_tcn_256x64``: an audio event tagger on 256 log-mel frames of 64 bins (1-D convolutions over time,
  mel bins as channels, residual dilated blocks 1-8, mean and max pooling, 527 sigmoid tags as AudioSet's);
* ``fsrcnn_x2_128``: an FSRCNN-like super-resolution net on a 128x128 luma plane (5x5 feature extraction, 1x1 shrink,
  four 3x3 mapping layers, 1x1 expand, PReLU), its up-sampling by depth-to-space (ESPCN's sub-pixel layer), x2;
* ``bisenet_lite_128``: a BiSeNet-like two-path segmenter (a spatial path of three stride-2 convolutions, a
  depthwise-separable context path to 1/32 with attention refinement, a feature fusion module with channel
  attention, 19 classes, bilinear up-sampling);
* ``ssdlite_160``: an SSDLite-like detector (a depthwise-separable backbone, depthwise-separable box and class
  predictors on five scales 10x10-1x1, 6 anchors, 21 classes, reshaped and concatenated);
* ``pointnet_1024``: a PointNet classifier on 1,024 points (shared per-point MLPs by dense layers, a 64x64 feature
  transform predicted by a T-Net and applied by a batched matrix product, max pooling over the points, 40 classes);
* ``dlrm_13d_26s``: a DLRM-like recommender (13 dense features through a bottom MLP; 26 categorical features, each
  read from its float by a cast into an id of its 1,000-row slice of one embedding table; pairwise dot-product
  interactions by a batched matrix product, their lower triangle gathered; a top MLP, a click probability);
* ``crnn_ocr_32x128``: a CRNN text recognizer on a 32x128 grey line (VGG-like convolutions and pools down to one
  row, a bidirectional LSTM of 128 units over the 32 columns, unrolled, 37 CTC classes per column: TensorFlow
  2.21's converter dies (a segmentation fault) on the full-int8 WHILE loop of the LSTM that is not unrolled);
* ``llm_block_4x256_t64``: a small decoder-only LLM stack on 64 positions of d=256 (four Llama-like blocks: RMSNorm,
  rotary positions, causal multi-head attention of 4 heads, SiLU-gated MLP of 688), without the token embedding.

Random weights (seeded by the caller); TensorFlow and Keras are imported by the caller's child process only. The
benchmark's input is one float tensor, so the recommender reads its ids from its input's floats.
"""

from __future__ import annotations

from typing import Any, Callable


def _bn(L: Any, x: Any, act: str | None = "relu") -> Any:
    x = L.BatchNormalization()(x)
    return L.Activation(act)(x) if act else x


def conformer(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L, ops = keras.layers, keras.ops
    d, heads = 144, 4

    def feed_forward(x: Any) -> Any:
        y = L.Dense(d)(L.Dense(4 * d, activation="swish")(L.LayerNormalization()(x)))
        return L.Add()([x, L.Rescaling(0.5)(y)])

    def conv_module(x: Any) -> Any:
        y = L.Dense(2 * d)(L.LayerNormalization()(x))
        a, b = ops.split(y, 2, axis=-1)
        y = L.Multiply()([a, L.Activation("sigmoid")(b)])  # GLU
        y = _bn(L, L.DepthwiseConv1D(15, padding="same")(y), act="swish")
        return L.Add()([x, L.Dense(d)(y)])

    inp = keras.Input(shape, batch_size=1)
    x = L.Reshape((*shape, 1))(inp)
    x = L.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Dense(d)(L.Reshape((x.shape[1], x.shape[2] * x.shape[3]))(x))
    for _ in range(4):
        x = feed_forward(x)
        y = L.LayerNormalization()(x)
        x = L.Add()([x, L.MultiHeadAttention(heads, d // heads)(y, y)])
        x = feed_forward(conv_module(x))
        x = L.LayerNormalization()(x)
    return keras.Model(inp, x, name=name)


def audio_tagger(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers
    inp = keras.Input(shape, batch_size=1)
    x = _bn(L, L.Conv1D(128, 5, padding="same")(inp))
    x = L.MaxPooling1D(2)(x)
    for rate in (1, 2, 4, 8):
        y = _bn(L, L.Conv1D(128, 3, padding="same", dilation_rate=rate)(x))
        y = _bn(L, L.Conv1D(128, 3, padding="same", dilation_rate=rate)(y), act=None)
        x = L.ReLU()(L.Add()([x, y]))
    x = L.MaxPooling1D(2)(_bn(L, L.Conv1D(256, 1)(x)))
    x = L.Concatenate()([L.GlobalAveragePooling1D()(x), L.GlobalMaxPooling1D()(x)])
    x = L.Dense(256, activation="relu")(x)
    return keras.Model(inp, L.Dense(527, activation="sigmoid")(x), name=name)


def fsrcnn(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    import tensorflow as tf

    L = keras.layers

    def conv_prelu(x: Any, filters: int, kernel: int) -> Any:
        return L.PReLU(shared_axes=[1, 2])(L.Conv2D(filters, kernel, padding="same")(x))

    inp = keras.Input(shape, batch_size=1)
    x = conv_prelu(conv_prelu(inp, 56, 5), 12, 1)
    for _ in range(4):
        x = conv_prelu(x, 12, 3)
    x = conv_prelu(x, 56, 1)
    x = L.Conv2D(4 * shape[-1], 3, padding="same")(x)
    x = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(x)
    return keras.Model(inp, x, name=name)


def bisenet(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers

    def conv(x: Any, filters: int, kernel: int = 3, strides: int = 1) -> Any:
        return _bn(L, L.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x))

    def separable(x: Any, filters: int, strides: int = 1) -> Any:
        x = _bn(L, L.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False)(x))
        return conv(x, filters, 1)

    def attention(x: Any) -> Any:  # BiSeNet's attention refinement: a channel gate from the pooled map
        g = L.GlobalAveragePooling2D(keepdims=True)(x)
        g = L.Activation("sigmoid")(L.BatchNormalization()(L.Conv2D(x.shape[-1], 1, use_bias=False)(g)))
        return L.Multiply()([x, g])

    inp = keras.Input(shape, batch_size=1)
    spatial = conv(conv(conv(inp, 64, 3, 2), 64, 3, 2), 128, 3, 2)  # 1/8
    x = conv(inp, 32, 3, 2)
    for filters, strides in ((64, 2), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)):
        x = separable(x, filters, strides)
        if filters == 256 and strides == 1:
            c16 = x
    c32 = x
    tail = L.GlobalAveragePooling2D(keepdims=True)(c32)
    c32 = L.Add()([conv(attention(conv(c32, 128, 1)), 128), conv(tail, 128, 1)])
    c16 = L.Add()([attention(conv(c16, 128, 1)), L.UpSampling2D(2, interpolation="bilinear")(c32)])
    context = conv(L.UpSampling2D(2, interpolation="bilinear")(c16), 128)
    fused = conv(L.Concatenate()([spatial, context]), 256, 1)  # the feature fusion module
    g = L.GlobalAveragePooling2D(keepdims=True)(fused)
    g = L.Conv2D(256, 1, activation="sigmoid")(L.Conv2D(64, 1, activation="relu")(g))
    fused = L.Add()([fused, L.Multiply()([fused, g])])
    x = L.Conv2D(19, 1)(conv(fused, 64))
    return keras.Model(inp, L.UpSampling2D(8, interpolation="bilinear")(x), name=name)


def ssdlite(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers
    anchors, classes = 6, 21

    def conv(x: Any, filters: int, kernel: int = 1, strides: int = 1) -> Any:
        return _bn(L, L.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x), act="relu6")

    def separable(x: Any, filters: int, strides: int = 1) -> Any:
        x = _bn(L, L.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False)(x), act="relu6")
        return conv(x, filters)

    def predictor(x: Any, per_anchor: int) -> Any:
        x = _bn(L, L.DepthwiseConv2D(3, padding="same", use_bias=False)(x), act="relu6")
        return L.Reshape((-1, per_anchor))(L.Conv2D(anchors * per_anchor, 1)(x))

    inp = keras.Input(shape, batch_size=1)
    x = conv(inp, 32, 3, 2)
    features = []
    for i, (filters, strides) in enumerate(((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1),
                                            (512, 1), (1024, 2), (1024, 1))):
        x = separable(x, filters, strides)
        if i in (7, 9):  # 1/16 and 1/32: 10x10 and 5x5 at 160
            features.append(x)
    for filters in (512, 256, 256):  # the extra layers: 1x1 squeeze, depthwise-separable stride 2
        x = separable(conv(x, filters // 2), filters, 2)
        features.append(x)
    boxes = L.Concatenate(axis=1)([predictor(f, 4) for f in features])
    scores = L.Softmax()(L.Concatenate(axis=1)([predictor(f, classes) for f in features]))
    return keras.Model(inp, [boxes, scores], name=name)


def pointnet(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L, ops = keras.layers, keras.ops

    def mlp(x: Any, units: int) -> Any:
        return _bn(L, L.Dense(units, use_bias=False)(x))

    inp = keras.Input(shape, batch_size=1)
    x = mlp(mlp(inp, 64), 64)
    t = L.GlobalMaxPooling1D()(mlp(mlp(x, 64), 256))  # the T-Net: a 64x64 feature transform
    t = L.Reshape((64, 64))(L.Dense(64 * 64)(mlp(t, 128)))
    x = L.Lambda(lambda a: ops.matmul(a[0], a[1]))([x, t])
    x = L.GlobalMaxPooling1D()(mlp(mlp(mlp(x, 64), 128), 1024))
    x = L.Dropout(0.3)(mlp(mlp(x, 512), 256))
    return keras.Model(inp, L.Dense(40)(x), name=name)


def dlrm(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    import numpy as np

    L, ops = keras.layers, keras.ops
    dense_n, sparse_n, rows, dim = 13, shape[0] - 13, 1000, 16
    offsets = ops.convert_to_tensor((np.arange(sparse_n) * rows).astype("int32")[None])
    pairs = np.tril_indices(sparse_n + 1, -1)
    lower = ops.convert_to_tensor((pairs[0] * (sparse_n + 1) + pairs[1]).astype("int32"))

    inp = keras.Input(shape, batch_size=1)
    dense = L.Lambda(lambda t: t[:, :dense_n])(inp)
    ids = L.Lambda(lambda t: ops.cast(ops.minimum(ops.abs(t[:, dense_n:]), 0.999) * rows, "int32") + offsets)(inp)
    emb = L.Embedding(sparse_n * rows, dim)(ids)  # one table, a 1,000-row slice per feature
    bottom = L.Dense(dim, activation="relu")(L.Dense(256, activation="relu")(L.Dense(512, activation="relu")(dense)))
    z = L.Concatenate(axis=1)([L.Reshape((1, dim))(bottom), emb])
    inter = L.Lambda(lambda t: ops.take(ops.reshape(ops.matmul(t, ops.transpose(t, (0, 2, 1))), (1, -1)), lower,
                                        axis=1))(z)
    x = L.Concatenate()([bottom, inter])
    for units in (512, 256):
        x = L.Dense(units, activation="relu")(x)
    return keras.Model(inp, L.Dense(1, activation="sigmoid")(x), name=name)


def crnn(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    L = keras.layers

    def conv(x: Any, filters: int, bn: bool = False) -> Any:
        x = L.Conv2D(filters, 3, padding="same", use_bias=not bn)(x)
        return _bn(L, x) if bn else L.ReLU()(x)

    inp = keras.Input(shape, batch_size=1)
    x = L.MaxPooling2D(2)(conv(inp, 64))  # 16x64
    x = L.MaxPooling2D(2)(conv(x, 128))  # 8x32
    x = L.MaxPooling2D((2, 1))(conv(conv(x, 256, bn=True), 256))  # 4x32
    x = L.MaxPooling2D((2, 1))(conv(conv(x, 256, bn=True), 256, bn=True))  # 2x32
    x = _bn(L, L.Conv2D(256, (2, 1), use_bias=False)(x))  # 1x32
    x = L.Reshape((x.shape[2], x.shape[3]))(x)
    x = L.Bidirectional(L.LSTM(128, return_sequences=True, unroll=True))(x)  # unrolled: the int8 WHILE crashes
    return keras.Model(inp, L.Dense(37)(x), name=name)


def llm_block(keras: Any, shape: tuple[int, ...], name: str) -> Any:
    import numpy as np

    L, ops = keras.layers, keras.ops
    rng = np.random.default_rng(0)
    t, d = shape
    heads, hidden = 4, 688
    hd = d // heads
    freq = 1.0 / 10000 ** (np.arange(0, hd, 2) / hd)
    angle = np.outer(np.arange(t), freq)
    cos = ops.convert_to_tensor(np.concatenate([np.cos(angle)] * 2, -1)[None, None].astype("float32"))
    sin = ops.convert_to_tensor(np.concatenate([np.sin(angle)] * 2, -1)[None, None].astype("float32"))
    mask = ops.convert_to_tensor(np.triu(np.full((t, t), -1e9, "float32"), 1)[None, None])

    def rms_norm(x: Any) -> Any:
        gamma = ops.convert_to_tensor(rng.normal(1.0, 0.02, (d,)).astype("float32"))
        return L.Lambda(lambda v: v * ops.rsqrt(ops.mean(ops.square(v), -1, keepdims=True) + 1e-6) * gamma)(x)

    def split_heads(x: Any) -> Any:
        return L.Permute((2, 1, 3))(L.Reshape((t, heads, hd))(x))

    def rotary(x: Any) -> Any:
        def rotate(v: Any) -> Any:
            a, b = ops.split(v, 2, axis=-1)
            return v * cos + ops.concatenate([-b, a], axis=-1) * sin
        return L.Lambda(rotate)(x)

    def attend(qkv: list[Any]) -> Any:
        q, k, v = qkv
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * (1.0 / hd ** 0.5) + mask
        return ops.matmul(ops.softmax(scores, axis=-1), v)

    inp = keras.Input(shape, batch_size=1)
    x = inp
    for _ in range(4):
        h = rms_norm(x)
        q = rotary(split_heads(L.Dense(d, use_bias=False)(h)))
        k = rotary(split_heads(L.Dense(d, use_bias=False)(h)))
        v = split_heads(L.Dense(d, use_bias=False)(h))
        a = L.Reshape((t, d))(L.Permute((2, 1, 3))(L.Lambda(attend)([q, k, v])))
        x = L.Add()([x, L.Dense(d, use_bias=False)(a)])
        h = rms_norm(x)
        gate = L.Dense(hidden, use_bias=False, activation="silu")(h)
        up = L.Dense(hidden, use_bias=False)(h)
        x = L.Add()([x, L.Dense(d, use_bias=False)(L.Multiply()([gate, up]))])
    return keras.Model(inp, rms_norm(x), name=name)


BUILDERS: dict[str, Callable[[Any, tuple[int, ...], str], Any]] = {
    "conformer_4x144_t200": conformer, "audio_tagger_tcn_256x64": audio_tagger, "fsrcnn_x2_128": fsrcnn,
    "bisenet_lite_128": bisenet, "ssdlite_160": ssdlite, "pointnet_1024": pointnet, "dlrm_13d_26s": dlrm,
    "crnn_ocr_32x128": crnn, "llm_block_4x256_t64": llm_block}
