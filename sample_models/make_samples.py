"""Build the small sample .tflite models in this directory.

Usage (needs TensorFlow, e.g. ``pip install tensorflow-cpu``)::

    python sample_models/make_samples.py            # writes every model next to this script
    python sample_models/make_samples.py --check    # also load + invoke each file in LiteRT
    python sample_models/make_samples.py --out DIR  # write somewhere else
    python sample_models/make_samples.py --mcu      # only the MLPerf Tiny samples, in mcu/
    python sample_models/make_samples.py --bundle   # only the LiteRT-LM bundles (needs litert-lm-builder and
                                                    # sentencepiece; TensorFlow for tiny_decoder_engine.litertlm)

Every model is built from fixed seeds (Keras weights, BatchNorm statistics, calibration
data), so running the script again with the same TensorFlow version gives the same graphs
and weights. Byte-for-byte identical files are likely but not guaranteed across TensorFlow
versions, because the converter embeds its version and may order tensors differently.

Files written (see README.md in this directory for shapes and what each one exercises):

  cnn_float.tflite           float CNN, input 1x32x32x3
  cnn_int8.tflite            same CNN, full-integer quantization (int8 in/out)
  cnn_dynamic_range.tflite   same CNN, dynamic-range quantization (int8 weights, float activations)
  cnn_fp16.tflite            same CNN, float16 weights (DEQUANTIZE ops feed float kernels)
  fcn_dynamic.tflite         fully-convolutional, shape_signature [-1, -1, -1, 3]
  mlp_dynamic_batch.tflite   Dense stack, shape_signature [-1, 64]
  transformer_block.tflite   one encoder block, input 1x16x32, 2 heads
  lstm.tflite                two Keras LSTM layers + Dense, input 1x8x4
  tiny_decoder.tflite        generative decoder with a KV cache: signatures prefill (16 tokens) and
                             decode (1 token) sharing one set of weights
  tiny_decoder_kv.tflite     the same decoder with int8 weights (dynamic range): decode signatures at
                             KV lengths 32, 64, 128 and one with a dynamic KV length (for sweep --kv-length)
  tiny_decoder.litertlm      a LiteRT-LM bundle of tiny_decoder.tflite (the prefill_decode model), packed
                             with the official litert-lm-builder, with a SentencePiece tokenizer trained
                             here on generated text and LlmMetadata (written when litert-lm-builder and
                             sentencepiece are installed: pip install 'tflite_flops[bundle]')
  tiny_decoder_engine.litertlm  the same decoder with its KV caches laid out [1, heads, slots, dim], the
                             layout the LiteRT-LM engine runs (it reads the context length from dim 2), in
                             the same kind of bundle: the sample the engine's Benchmark measures

  mcu/kws_ds_cnn.tflite      MLPerf Tiny samples for TensorFlow Lite Micro (--mcu writes only these): DS-CNN
  mcu/vww_mobilenet_v1_025.tflite  keyword spotting, MobileNetV1-0.25 visual wake words, ResNet-8 (CIFAR-10)
  mcu/ic_resnet8.tflite      and the FC autoencoder for anomaly detection; random weights, full int8,
  mcu/ad_autoencoder.tflite  batch 1

About the LSTM: with Keras 3 (the Keras that ships with TensorFlow >= 2.16) the converter
does NOT fuse ``keras.layers.LSTM`` into UNIDIRECTIONAL_SEQUENCE_LSTM; each layer becomes a
WHILE op whose cond/body subgraphs hold the per-step FULLY_CONNECTED/LOGISTIC/TANH/MUL ops
(5 subgraphs in all). ``lstm.tflite`` is therefore already the WHILE-loop model. The script
checks this after conversion; if a converter ever fuses the layers instead, it additionally
writes ``lstm_while.tflite`` built from ``keras.layers.RNN(keras.layers.LSTMCell(...))``,
which is always traced as a generic while loop.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the package of this checkout: its converter recipe (tflite_flops.convert)

CNN_SHAPE = (1, 32, 32, 3)
FCN_CHANNELS = 3
MLP_FEATURES = 64
SEQ_LEN, D_MODEL, HEADS = 16, 32, 2
LSTM_STEPS, LSTM_FEATURES, LSTM_UNITS = 8, 4, 16
# tiny_decoder: vocabulary, model width, heads, layers, FFN width, KV-cache length, prefill tokens
DEC_VOCAB, DEC_D, DEC_HEADS, DEC_LAYERS, DEC_FFN, DEC_KV_LEN, DEC_PREFILL = 256, 64, 4, 2, 128, 64, 16
# tiny_decoder_kv: decode steps compiled at three KV lengths, and one whose KV length is a dynamic dim
DEC_KV_SIGNATURES = (("decode_kv32", 1, 32), ("decode_kv64", 1, 64), ("decode_kv128", 1, 128), ("decode", 1, None))


def _tf():
    import tensorflow as tf

    return tf


def _keras():
    import keras

    return keras


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------

def _randomize_batchnorm(layer, seed: int) -> None:
    """Give a BatchNormalization layer non-trivial statistics so that folding it changes the weights."""
    rng = np.random.default_rng(seed)
    gamma, beta, mean, var = layer.get_weights()
    layer.set_weights([
        rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
        rng.uniform(-0.2, 0.2, beta.shape).astype(np.float32),
        rng.uniform(-0.2, 0.2, mean.shape).astype(np.float32),
        rng.uniform(0.5, 1.5, var.shape).astype(np.float32),
    ])


def build_cnn(seed: int = 0):
    """Small CNN, static 1x32x32x3.

    conv3x3/s2+relu -> depthwise3x3+relu -> conv1x1 -> BatchNorm (folded) -> Add (residual)
    -> MaxPool 2x2 -> [identity, conv3x3+relu] Concatenate -> Conv2DTranspose 3x3/s2+relu
    -> GlobalAveragePooling -> Dense(10) -> Softmax.
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input(CNN_SHAPE[1:], batch_size=CNN_SHAPE[0], name="image")
    x0 = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="stem")(inp)     # 16x16x16
    y = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dw")(x0)              # 16x16x16
    y = L.Conv2D(16, 1, use_bias=False, name="pw")(y)                                      # 16x16x16
    bn = L.BatchNormalization(name="bn")
    y = bn(y)
    x = L.Add(name="residual")([x0, y])
    x = L.MaxPooling2D(2, name="pool")(x)                                                  # 8x8x16
    b = L.Conv2D(8, 3, padding="same", activation="relu", name="branch")(x)                # 8x8x8
    x = L.Concatenate(name="concat")([x, b])                                               # 8x8x24
    x = L.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu", name="up")(x)  # 16x16x8
    x = L.GlobalAveragePooling2D(name="gap")(x)                                            # 8
    x = L.Dense(10, name="logits")(x)
    out = L.Softmax(name="probs")(x)
    model = keras.Model(inp, out, name="cnn")
    _randomize_batchnorm(bn, seed + 1)
    return model


def _resize2x_layer():
    """A layer doubling H and W with bilinear resizing, computed from the runtime shape.

    (keras.layers.UpSampling2D needs static H/W when traced with [None, None, None, C].)
    """
    tf, keras = _tf(), _keras()

    class Resize2x(keras.layers.Layer):
        def call(self, x):
            size = tf.shape(x)[1:3] * 2
            return tf.image.resize(x, size, method="bilinear")

        def compute_output_shape(self, input_shape):
            n, h, w, c = input_shape
            return (n, None if h is None else 2 * h, None if w is None else 2 * w, c)

    return Resize2x(name="resize")


def build_fcn(seed: int = 1):
    """Fully-convolutional model for any batch / height / width (channels 3), no Dense.

    conv3x3/s2+relu -> depthwise3x3+relu -> conv1x1 -> Add (residual) -> MaxPool 2x2
    -> conv3x3+relu -> bilinear resize x2 -> conv1x1 head (4 classes).
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input((None, None, FCN_CHANNELS), name="image")
    x0 = L.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="stem")(inp)
    y = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dw")(x0)
    y = L.Conv2D(8, 1, name="pw")(y)
    x = L.Add(name="residual")([x0, y])
    x = L.MaxPooling2D(2, padding="same", name="pool")(x)
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv")(x)
    x = _resize2x_layer()(x)
    out = L.Conv2D(4, 1, name="head")(x)
    return keras.Model(inp, out, name="fcn")


def build_mlp(seed: int = 2):
    """Dense 64 -> 128 (relu) -> 64 (relu) -> 10, dynamic batch."""
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input((MLP_FEATURES,), name="features")
    x = L.Dense(128, activation="relu", name="fc1")(inp)
    x = L.Dense(64, activation="relu", name="fc2")(x)
    out = L.Dense(10, name="fc3")(x)
    return keras.Model(inp, out, name="mlp")


def build_transformer(seed: int = 3):
    """One post-norm transformer encoder block: MHA(2 heads, key_dim 16) + Add + LayerNorm,
    FFN Dense(64, gelu) -> Dense(32) + Add + LayerNorm. Input 1x16x32."""
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input((SEQ_LEN, D_MODEL), batch_size=1, name="tokens")
    att = L.MultiHeadAttention(num_heads=HEADS, key_dim=D_MODEL // HEADS, name="mha")(inp, inp)
    x = L.LayerNormalization(epsilon=1e-6, name="ln1")(L.Add(name="add1")([inp, att]))
    f = L.Dense(2 * D_MODEL, activation="gelu", name="ffn1")(x)
    f = L.Dense(D_MODEL, name="ffn2")(f)
    out = L.LayerNormalization(epsilon=1e-6, name="ln2")(L.Add(name="add2")([x, f]))
    return keras.Model(inp, out, name="transformer_block")


def build_lstm(seed: int = 4, cell_rnn: bool = False):
    """Two LSTM layers (16 units, first returns sequences) + Dense(3). Input 1x8x4.

    ``cell_rnn=True`` uses ``RNN(LSTMCell)``, which the converter never fuses (WHILE loop).
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input((LSTM_STEPS, LSTM_FEATURES), batch_size=1, name="sequence")
    if cell_rnn:
        x = L.RNN(L.LSTMCell(LSTM_UNITS), return_sequences=True, unroll=False, name="lstm1")(inp)
        x = L.RNN(L.LSTMCell(LSTM_UNITS), unroll=False, name="lstm2")(x)
    else:
        x = L.LSTM(LSTM_UNITS, return_sequences=True, name="lstm1")(inp)
        x = L.LSTM(LSTM_UNITS, name="lstm2")(x)
    out = L.Dense(3, name="head")(x)
    return keras.Model(inp, out, name="lstm")


# --------------------------------------------------------------------------------------------
# MLPerf Tiny (v1.x reference models, github.com/mlcommons/tiny, benchmark/training/*), random
# weights, full int8, batch 1: the TensorFlow Lite Micro samples in mcu/
# --------------------------------------------------------------------------------------------

KWS_SHAPE, VWW_SHAPE, IC_SHAPE, AD_FEATURES = (1, 49, 10, 1), (1, 96, 96, 3), (1, 32, 32, 3), 640
MCU_DIR = "mcu"


def _conv_bn_relu(L, x, filters, kernel, strides, name, seed):
    """Conv2D (no bias) -> BatchNormalization (random statistics, folded by the converter) -> ReLU."""
    x = L.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False, name=name)(x)
    bn = L.BatchNormalization(name=name + "_bn")
    x = bn(x)
    _BN_SEEDS.append((bn, seed))
    return L.ReLU(name=name + "_relu")(x)


def _dw_bn_relu(L, x, strides, name, seed):
    """DepthwiseConv2D 3x3 (no bias) -> BatchNormalization -> ReLU."""
    x = L.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False, name=name)(x)
    bn = L.BatchNormalization(name=name + "_bn")
    x = bn(x)
    _BN_SEEDS.append((bn, seed))
    return L.ReLU(name=name + "_relu")(x)


_BN_SEEDS: list = []  # (BatchNormalization layer, seed) of the model being built, randomized once it is built


def _finish(keras, inp, out, name):
    """The Keras model, with every BatchNormalization of it given random statistics."""
    model = keras.Model(inp, out, name=name)
    for bn, seed in _BN_SEEDS:
        _randomize_batchnorm(bn, seed)
    _BN_SEEDS.clear()
    return model


def build_kws_ds_cnn(seed: int = 10):
    """Keyword spotting, DS-CNN (benchmark/training/keyword_spotting, keras_model.py ``ds_cnn``).

    MFCC input 49x10x1 -> Conv2D 64 (10x4, stride 2, same) + BN + ReLU -> 4 x [DepthwiseConv2D 3x3
    + BN + ReLU -> Conv2D 64 1x1 + BN + ReLU] -> AveragePooling2D (24, 5) (the 25x5 map to 1x1)
    -> Flatten -> Dense 12 -> Softmax. (The reference's dropout layers are identities at inference.)
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input(KWS_SHAPE[1:], batch_size=1, name="mfcc")
    x = _conv_bn_relu(L, inp, 64, (10, 4), 2, "conv", seed)
    for i in range(4):
        x = _dw_bn_relu(L, x, 1, f"dw{i}", seed + 2 * i + 1)
        x = _conv_bn_relu(L, x, 64, 1, 1, f"pw{i}", seed + 2 * i + 2)
    x = L.AveragePooling2D(pool_size=(KWS_SHAPE[1] // 2, KWS_SHAPE[2] // 2), name="pool")(x)
    x = L.Flatten(name="flatten")(x)
    out = L.Dense(12, activation="softmax", name="logits")(x)
    return _finish(keras, inp, out, "kws_ds_cnn")


def build_vww_mobilenet(seed: int = 20, alpha: float = 0.25):
    """Visual wake words, MobileNetV1 alpha 0.25 (benchmark/training/visual_wake_words, vww_model.py).

    96x96x3 -> Conv2D 3x3/2 8 + BN + ReLU -> 13 depthwise-separable blocks [DepthwiseConv2D 3x3
    (stride 2 in blocks 2, 4, 6, 12) + BN + ReLU -> Conv2D 1x1 + BN + ReLU] with 16, 32, 32, 64, 64,
    128, 128 x 5, 256, 256 filters (64·alpha ...) -> AveragePooling2D 3x3 -> Flatten -> Dense 2 -> Softmax.
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input(VWW_SHAPE[1:], batch_size=1, name="image")
    x = _conv_bn_relu(L, inp, int(32 * alpha), 3, 2, "conv", seed)
    blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    for i, (filters, stride) in enumerate(blocks):
        x = _dw_bn_relu(L, x, stride, f"dw{i}", seed + 2 * i + 1)
        x = _conv_bn_relu(L, x, int(filters * alpha), 1, 1, f"pw{i}", seed + 2 * i + 2)
    x = L.AveragePooling2D(pool_size=x.shape[1:3], name="pool")(x)
    x = L.Flatten(name="flatten")(x)
    out = L.Dense(2, activation="softmax", name="logits")(x)
    return _finish(keras, inp, out, "vww_mobilenet_v1_025")


def build_ic_resnet8(seed: int = 30):
    """Image classification, ResNet-8 for CIFAR-10 (benchmark/training/image_classification, keras_model.py).

    32x32x3 -> Conv2D 16 3x3 + BN + ReLU -> three residual stacks of [Conv2D 3x3 (stride 1, 2, 2) + BN
    + ReLU -> Conv2D 3x3 + BN] + shortcut (identity in the first, Conv2D 1x1 stride 2 in the others)
    -> Add -> ReLU, with 16, 32, 64 filters -> AveragePooling2D 8x8 -> Flatten -> Dense 10 -> Softmax.
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input(IC_SHAPE[1:], batch_size=1, name="image")
    x = _conv_bn_relu(L, inp, 16, 3, 1, "conv", seed)
    for i, (filters, stride) in enumerate([(16, 1), (32, 2), (64, 2)]):
        y = _conv_bn_relu(L, x, filters, 3, stride, f"stack{i}_a", seed + 3 * i + 1)
        y = L.Conv2D(filters, 3, padding="same", use_bias=False, name=f"stack{i}_b")(y)
        bn = L.BatchNormalization(name=f"stack{i}_b_bn")
        y = bn(y)
        _BN_SEEDS.append((bn, seed + 3 * i + 2))
        if stride != 1:
            x = L.Conv2D(filters, 1, strides=stride, padding="same", name=f"stack{i}_short")(x)
        x = L.ReLU(name=f"stack{i}_relu")(L.Add(name=f"stack{i}_add")([x, y]))
    x = L.AveragePooling2D(pool_size=x.shape[1:3], name="pool")(x)
    x = L.Flatten(name="flatten")(x)
    out = L.Dense(10, activation="softmax", name="logits")(x)
    return _finish(keras, inp, out, "ic_resnet8")


def build_ad_autoencoder(seed: int = 40):
    """Anomaly detection, the FC autoencoder (benchmark/training/anomaly_detection, keras_model.py).

    640 inputs (5 frames x 128 log-mel bins) -> 4 x [Dense 128 + BN + ReLU] -> Dense 8 + BN + ReLU
    -> 4 x [Dense 128 + BN + ReLU] -> Dense 640.
    """
    keras = _keras()
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inp = keras.Input((AD_FEATURES,), batch_size=1, name="features")
    x = inp
    for i, units in enumerate([128] * 4 + [8] + [128] * 4):
        x = L.Dense(units, name=f"dense{i}")(x)
        bn = L.BatchNormalization(name=f"dense{i}_bn")
        x = bn(x)
        _BN_SEEDS.append((bn, seed + i + 1))
        x = L.ReLU(name=f"dense{i}_relu")(x)
    out = L.Dense(AD_FEATURES, name="reconstruction")(x)
    return _finish(keras, inp, out, "ad_autoencoder")


def build_decoder(seed: int = 5, signatures: tuple[tuple[str, int, int | None], ...] = (
        ("prefill", DEC_PREFILL, DEC_KV_LEN), ("decode", 1, DEC_KV_LEN)), heads_first: bool = False):
    """A tiny decoder-only transformer with an explicit KV cache, as a ``tf.Module``.

    Token embedding (GATHER) -> 2 × [RMSNorm, fused QKV projection, K/V written into the cache
    at ``input_pos[0]`` with XLA's DynamicUpdateSlice (the converter emits DYNAMIC_UPDATE_SLICE),
    attention of every query over the whole cache (KV_LEN = 64 slots; slots after the query's
    position masked with -1e9), output projection, residual, RMSNorm, ReLU FFN 64 -> 128 -> 64,
    residual] -> RMSNorm -> logits over the vocabulary for every input token.

    The cache is state kept by the caller: each signature takes ``kv_cache_{k,v}_{layer}``
    [1, KV_LEN, HEADS, D/HEADS] and returns the updated tensors under the same names (what
    LiteRT's generative examples do). Both signatures use the same variables, so the converter
    writes one copy of the weights that both subgraphs read.

    ``signatures``: (key, tokens per call, KV length) of each signature; a KV length of None makes
    the cache length a dynamic dim (``[1, -1, HEADS, D/HEADS]``; the mask follows the cache's shape).
    ``heads_first``: caches laid out ``[1, HEADS, KV_LEN, D/HEADS]`` instead (the layout the LiteRT-LM
    engine reads its context length from: dim 2).
    """
    tf = _tf()
    from tensorflow.compiler.tf2xla.python import xla  # DynamicUpdateSlice -> DYNAMIC_UPDATE_SLICE

    d, heads, layers = DEC_D, DEC_HEADS, DEC_LAYERS
    dh = d // heads
    rng = np.random.default_rng(seed)

    def var(*shape, scale=0.05, offset=0.0):
        return tf.Variable((offset + rng.normal(0.0, scale, shape)).astype(np.float32))

    class Decoder(tf.Module):
        def __init__(self):
            super().__init__(name="tiny_decoder")
            self.embed = var(DEC_VOCAB, d)
            self.blocks = [{"norm1": var(d, scale=0.1, offset=1.0), "qkv": var(d, 3 * d), "out": var(d, d),
                            "norm2": var(d, scale=0.1, offset=1.0), "up": var(d, DEC_FFN), "down": var(DEC_FFN, d)}
                           for _ in range(layers)]
            self.norm = var(d, scale=0.1, offset=1.0)
            self.head = var(d, DEC_VOCAB)

        @staticmethod
        def rms(x, g):
            return x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) + 1e-6) * g

        def step(self, tokens, input_pos, caches):
            t = tokens.shape[1]
            x = tf.gather(self.embed, tokens)  # [1, T, D]
            seq = 2 if heads_first else 1  # the cache's KV-length dim
            kv_len = caches["kv_cache_k_0"].shape[seq] or tf.shape(caches["kv_cache_k_0"])[seq]
            mask = tf.where(tf.range(kv_len)[None, :] <= input_pos[:, None], 0.0, -1e9)  # [T, KV_LEN]
            start = tf.stack([0, 0, input_pos[0], 0] if heads_first else [0, input_pos[0], 0, 0])
            to_cache = (lambda a: tf.transpose(a, [0, 2, 1, 3])) if heads_first else (lambda a: a)
            to_bhsd = (lambda a: a) if heads_first else (lambda a: tf.transpose(a, [0, 2, 1, 3]))
            out = {}
            for i, blk in enumerate(self.blocks):
                q, k, v = tf.split(tf.matmul(self.rms(x, blk["norm1"]), blk["qkv"]), 3, axis=-1)
                k_cache = xla.dynamic_update_slice(caches[f"kv_cache_k_{i}"], to_cache(tf.reshape(k, [1, t, heads, dh])),
                                                   start)
                v_cache = xla.dynamic_update_slice(caches[f"kv_cache_v_{i}"], to_cache(tf.reshape(v, [1, t, heads, dh])),
                                                   start)
                out[f"kv_cache_k_{i}"], out[f"kv_cache_v_{i}"] = k_cache, v_cache
                qh = tf.transpose(tf.reshape(q, [1, t, heads, dh]), [0, 2, 1, 3])  # [1, H, T, dh]
                scores = tf.matmul(qh, to_bhsd(k_cache), transpose_b=True) * (1.0 / dh ** 0.5)
                probs = tf.nn.softmax(scores + mask, axis=-1)  # [1, H, T, KV_LEN]
                att = tf.matmul(probs, to_bhsd(v_cache))  # [1, H, T, dh]
                x = x + tf.matmul(tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [1, t, d]), blk["out"])
                h = self.rms(x, blk["norm2"])
                x = x + tf.matmul(tf.nn.relu(tf.matmul(h, blk["up"])), blk["down"])
            out["logits"] = tf.matmul(self.rms(x, self.norm), self.head)  # [1, T, VOCAB]
            return out

    module = Decoder()
    cache_names = [f"kv_cache_{kv}_{i}" for i in range(layers) for kv in "kv"]

    def signature(tokens: int, kv_len: int | None):
        specs = [tf.TensorSpec([1, tokens], tf.int32, name="tokens"), tf.TensorSpec([tokens], tf.int32, name="input_pos")]
        shape = [1, heads, kv_len, dh] if heads_first else [1, kv_len, heads, dh]
        specs += [tf.TensorSpec(shape, tf.float32, name=n) for n in cache_names]

        @tf.function(input_signature=specs)
        def run(tokens, input_pos, *caches):
            return module.step(tokens, input_pos, dict(zip(cache_names, caches)))

        return run.get_concrete_function()

    return module, {key: signature(tokens, kv_len) for key, tokens, kv_len in signatures}


# --------------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet():
    """Hide the Python-level chatter of Keras' export ("Saved artifact at ...")."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        yield


def convert_keras(model, mode: str = "float", calib_shape=None, seed: int = 1234) -> bytes:
    """Convert a Keras model with the package's recipe (``tflite_flops.convert.to_tflite``). mode: float |
    int8 | dynamic_range | fp16; int8 is calibrated on 16 uniform random inputs of ``calib_shape``."""
    from tflite_flops.convert import to_tflite

    representative = None
    if mode == "int8":
        shape = tuple(calib_shape or model.inputs[0].shape)

        def representative():
            rng = np.random.default_rng(seed)
            for _ in range(16):
                yield [rng.uniform(-1.0, 1.0, shape).astype(np.float32)]

    return to_tflite(model, mode, representative)


def convert_signatures(module, signatures, mode: str = "float") -> bytes:
    """Save a tf.Module with several signatures as a SavedModel and convert every signature.

    Subgraph order follows ``signatures``; weights that several signatures use are stored once
    (the converter deduplicates identical read-only buffers). ``mode``: float, or dynamic_range
    (int8 weights, float activations).
    """
    import tempfile

    from tflite_flops.convert import to_tflite

    if mode not in ("float", "dynamic_range"):
        raise ValueError(f"unknown conversion mode {mode!r}")
    tf = _tf()
    with tempfile.TemporaryDirectory() as folder, _quiet():
        tf.saved_model.save(module, folder, signatures=signatures)
        return to_tflite(folder, mode, signature_keys=list(signatures))


def convert_fcn(model) -> bytes:
    """Convert through a concrete function with TensorSpec [None, None, None, 3].

    Not ``tflite_flops.convert.to_tflite``: the frozen function is converted with the Keras model as its
    trackable object (``from_concrete_functions([frozen], model)``), which changes the converter's output;
    ``to_tflite`` takes a concrete function alone."""
    tf = _tf()
    spec = tf.TensorSpec([None, None, None, FCN_CHANNELS], tf.float32, name="image")

    @tf.function(input_signature=[spec])
    def serve(image):
        return model(image, training=False)

    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    # Freeze the weights first: converting the concrete function directly keeps them as
    # resource variables (VAR_HANDLE/READ_VARIABLE ops) that the interpreter cannot read.
    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    conv = tf.lite.TFLiteConverter.from_concrete_functions([frozen], model)
    with _quiet():
        return conv.convert()


# --------------------------------------------------------------------------------------------
# Inspection
# --------------------------------------------------------------------------------------------

def op_types(model_bytes: bytes) -> list[list[str]]:
    """Builtin (or custom) op names per subgraph, read with the ``tflite`` flatbuffer package."""
    import tflite

    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(model_bytes, 0)
    out = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        ops = []
        for i in range(sg.OperatorsLength()):
            oc = m.OperatorCodes(sg.Operators(i).OpcodeIndex())
            code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
            name = names.get(code, str(code))
            if name == "CUSTOM":
                name = "CUSTOM:" + oc.CustomCode().decode()
            ops.append(name)
        out.append(ops)
    return out


def input_signature(model_bytes: bytes) -> list[tuple[str, list[int], str]]:
    """(name, shape_signature or shape, dtype) of each input of subgraph 0."""
    import tflite

    types = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(model_bytes, 0)
    sg = m.Subgraphs(0)
    res = []
    for i in range(sg.InputsLength()):
        t = sg.Tensors(sg.Inputs(i))
        sig = t.ShapeSignatureAsNumpy() if t.ShapeSignatureLength() else t.ShapeAsNumpy()
        res.append((t.Name().decode(), [int(v) for v in sig], types.get(t.Type(), str(t.Type()))))
    return res


def check_signatures(path: Path) -> list[str]:
    """Run every signature of ``path`` once through LiteRT's signature runner with valid token ids
    and positions 0..T-1; return "key: output shapes" lines."""
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(path))
    lines = []
    rng = np.random.default_rng(0)
    for key in interp.get_signature_list():
        runner = interp.get_signature_runner(key)
        feed = {}
        for name, d in runner.get_input_details().items():
            shape = tuple(int(v) for v in d["shape"])
            if name == "tokens":
                feed[name] = rng.integers(0, DEC_VOCAB, shape).astype(d["dtype"])
            elif name == "input_pos":
                feed[name] = np.arange(shape[0], dtype=d["dtype"])
            else:
                feed[name] = np.zeros(shape, d["dtype"])
        outs = runner(**feed)
        lines.append(f"{key}: " + ", ".join(f"{k}{list(v.shape)}" for k, v in sorted(outs.items())))
    return lines


def check_runs(path: Path, concrete_shapes: dict[int, tuple[int, ...]] | None = None) -> list[tuple]:
    """Load ``path`` in the LiteRT interpreter, optionally resize inputs, invoke once on random data.

    Returns the output shapes. Uses ai_edge_litert when installed, else tf.lite.Interpreter.
    """
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
        kwargs = {"experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    except ImportError:  # pragma: no cover - fallback for environments without LiteRT
        Interpreter = _tf().lite.Interpreter
        kwargs = {}
    interp = Interpreter(model_path=str(path), **kwargs)
    for idx, shape in (concrete_shapes or {}).items():
        interp.resize_tensor_input(interp.get_input_details()[idx]["index"], list(shape), strict=False)
    interp.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interp.get_input_details():
        if np.issubdtype(d["dtype"], np.integer):
            info = np.iinfo(d["dtype"])
            data = rng.integers(info.min, info.max, d["shape"], endpoint=True).astype(d["dtype"])
        else:
            data = rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
        interp.set_tensor(d["index"], data)
    interp.invoke()
    return [tuple(int(v) for v in interp.get_tensor(d["index"]).shape) for d in interp.get_output_details()]


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

# Concrete shapes used by --check for models whose signature has -1 dims.
CHECK_SHAPES = {
    "fcn_dynamic.tflite": {0: (2, 48, 40, 3)},
    "mlp_dynamic_batch.tflite": {0: (5, MLP_FEATURES)},
}


def build_all() -> dict[str, bytes]:
    """Return {file name: .tflite bytes} for every sample model."""
    files: dict[str, bytes] = {}
    cnn = build_cnn()
    for mode, name in [("float", "cnn_float"), ("int8", "cnn_int8"),
                       ("dynamic_range", "cnn_dynamic_range"), ("fp16", "cnn_fp16")]:
        files[name + ".tflite"] = convert_keras(cnn, mode, calib_shape=CNN_SHAPE)
    files["fcn_dynamic.tflite"] = convert_fcn(build_fcn())
    files["mlp_dynamic_batch.tflite"] = convert_keras(build_mlp())
    files["transformer_block.tflite"] = convert_keras(build_transformer())

    lstm = convert_keras(build_lstm())
    files["lstm.tflite"] = lstm
    if "WHILE" not in {op for sg in op_types(lstm) for op in sg}:
        # This converter fused the Keras LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM); also provide a
        # WHILE-loop version built from the generic RNN(LSTMCell) wrapper.
        files["lstm_while.tflite"] = convert_keras(build_lstm(cell_rnn=True))
    files["tiny_decoder.tflite"] = convert_signatures(*build_decoder())
    files["tiny_decoder_kv.tflite"] = convert_signatures(*build_decoder(signatures=DEC_KV_SIGNATURES),
                                                         mode="dynamic_range")
    return files


def build_mcu() -> dict[str, bytes]:
    """Return {file name: .tflite bytes} for the MLPerf Tiny samples (written to ``mcu/``): full int8
    (int8 input and output), calibrated on 16 random inputs, batch 1."""
    return {"kws_ds_cnn.tflite": convert_keras(build_kws_ds_cnn(), "int8", calib_shape=KWS_SHAPE),
            "vww_mobilenet_v1_025.tflite": convert_keras(build_vww_mobilenet(), "int8", calib_shape=VWW_SHAPE),
            "ic_resnet8.tflite": convert_keras(build_ic_resnet8(), "int8", calib_shape=IC_SHAPE),
            "ad_autoencoder.tflite": convert_keras(build_ad_autoencoder(), "int8", calib_shape=(1, AD_FEATURES))}


# The bundles' tokenizer: a SentencePiece BPE model with one piece per token id of the decoder's vocabulary,
# trained on sentences of made-up words (consonant-vowel syllables) drawn with a fixed seed.
BUNDLE_WORDS, BUNDLE_SENTENCES, BUNDLE_MAX_TOKENS = 400, 3000, 64


def build_bundle(decoder: Path, out: Path) -> int:
    """Pack ``decoder`` (tiny_decoder.tflite) into a LiteRT-LM bundle at ``out``; return its size.

    Uses the official ``litert-lm-builder``: the model as the ``prefill_decode`` section (backend
    constraint cpu), a SentencePiece tokenizer of DEC_VOCAB pieces trained offline on generated
    text (ids 0 unk, 1 bos, 2 eos; identity normalisation keeps it small), and an ``LlmMetadata``
    protobuf (generic model, start token 1, stop token 2, 64 tokens). The builder stamps a fresh
    uuid and creation time into the system metadata, so two builds differ in those two entries only.
    """
    import random
    import tempfile

    import sentencepiece as spm
    from litert_lm_builder import litertlm_builder as lb
    from litert_lm_builder.runtime.proto import llm_metadata_pb2

    rnd = random.Random(7)
    words = ["".join(rnd.choice("bcdfghjklmnprstvwz") + rnd.choice("aeiou") for _ in range(rnd.randint(1, 4)))
             for _ in range(BUNDLE_WORDS)]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(" ".join(rnd.choice(words) for _ in range(12)) for _ in range(BUNDLE_SENTENCES)))
        with _quiet():
            spm.SentencePieceTrainer.train(
                input=str(corpus), model_prefix=str(Path(tmp) / "tok"), vocab_size=DEC_VOCAB, model_type="bpe",
                num_threads=1, unk_id=0, bos_id=1, eos_id=2, pad_id=-1, normalization_rule_name="identity",
                minloglevel=2)
        meta = llm_metadata_pb2.LlmMetadata()
        meta.start_token.token_ids.ids.append(1)
        meta.stop_tokens.add().token_ids.ids.append(2)
        meta.max_num_tokens = BUNDLE_MAX_TOKENS
        meta.llm_model_type.generic_model.SetInParent()
        (Path(tmp) / "llm_metadata.pb").write_bytes(meta.SerializeToString())
        builder = lb.LitertLmFileBuilder()
        builder.add_system_metadata(lb.Metadata(key="Authors", value="tflite_flops sample_models",
                                                dtype=lb.DType.STRING))
        builder.add_tflite_model(str(decoder), lb.TfLiteModelType.PREFILL_DECODE, backend_constraint="cpu")
        builder.add_sentencepiece_tokenizer(str(Path(tmp) / "tok.model"))
        builder.add_llm_metadata(str(Path(tmp) / "llm_metadata.pb"))
        with open(out, "wb") as f:
            builder.build(f)
    return out.stat().st_size


def write_bundles(out: Path) -> None:
    """Write tiny_decoder.litertlm (from ``out``/tiny_decoder.tflite) and tiny_decoder_engine.litertlm
    (the heads-first decoder, converted here: needs TensorFlow)."""
    import tempfile

    size = build_bundle(out / "tiny_decoder.tflite", out / "tiny_decoder.litertlm")
    print(f"{'tiny_decoder.litertlm':<28} {size:>8}  LiteRT-LM bundle of tiny_decoder.tflite")
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "tiny_decoder.tflite"
        model.write_bytes(convert_signatures(*build_decoder(heads_first=True)))
        size = build_bundle(model, out / "tiny_decoder_engine.litertlm")
    print(f"{'tiny_decoder_engine.litertlm':<28} {size:>8}  the decoder with [1, heads, slots, dim] caches, bundled")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: next to this script)")
    parser.add_argument("--check", action="store_true", help="load and invoke every file in the LiteRT interpreter")
    parser.add_argument("--ops", action="store_true", help="print the op types of every subgraph")
    parser.add_argument("--bundle", action="store_true",
                        help="only pack tiny_decoder.tflite (already in --out) into tiny_decoder.litertlm")
    parser.add_argument("--mcu", action="store_true",
                        help="only the MLPerf Tiny samples (TensorFlow Lite Micro), in mcu/ under --out")
    args = parser.parse_args(argv)

    start = time.time()
    if args.bundle:
        write_bundles(args.out)
        return 0
    files = {} if args.mcu else build_all()
    files.update({f"{MCU_DIR}/{name}": data for name, data in build_mcu().items()})
    (args.out / MCU_DIR).mkdir(parents=True, exist_ok=True)
    print(f"{'file':<28} {'bytes':>8}  inputs (shape_signature)")
    for name, data in files.items():
        path = args.out / name
        path.write_bytes(data)
        sig = ", ".join(f"{n}{s}:{t}" for n, s, t in input_signature(data))
        print(f"{name:<28} {len(data):>8}  {sig}")
        if args.ops:
            for i, ops in enumerate(op_types(data)):
                print(f"    subgraph {i}: {' '.join(ops)}")
        if args.check and name.startswith("tiny_decoder"):
            for line in check_signatures(path):
                print(f"    signature {line}")
        elif args.check:
            outs = check_runs(path, CHECK_SHAPES.get(name))
            print(f"    invoked OK, output shapes {outs}")
    if args.mcu:
        print(f"done in {time.time() - start:.1f} s")
        return 0
    try:
        import litert_lm_builder  # noqa: F401
        import sentencepiece  # noqa: F401
    except ImportError:
        print("bundles not written: pip install 'tflite_flops[bundle]' (litert-lm-builder, sentencepiece)")
    else:
        write_bundles(args.out)
    print(f"done in {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
