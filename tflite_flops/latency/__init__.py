"""The latency model: device profiles, the predicted time of every op, and the calibration that fits them.

Two halves, on two layers (docs/contributing.md, ``tests/test_layers.py``):

* static, on the analysis layer (they run nothing and import no runtime):
  :mod:`~tflite_flops.latency.profile` (:class:`~tflite_flops.latency.profile.DeviceProfile`, its fitted
  ``Law`` per op key, the ``Machine`` it was calibrated on, and ``op_features``, which describes an op
  alike for fitting and prediction), :mod:`~tflite_flops.latency.predict` (``analyze --predict``: the
  predicted time of every op and of the model), :mod:`~tflite_flops.latency.cache` (where an op's data is in
  a whole model: reuse distances and their measured cost) and :mod:`~tflite_flops.latency.fit` (the laws and
  the cache curve fitted to timed points: non-negative least squares);
* measuring, on the measure layer (they write and time models): :mod:`~tflite_flops.latency.suite`
  (the calibration suite's models), :mod:`~tflite_flops.latency.calibrate` (``calibrate``: time the
  suite here, warm and cold, fit, save a profile; ``--drift-check``'s timing) and :mod:`~tflite_flops.latency.pack` (the same for a phone through
  ``benchmark_model``).

This ``__init__`` imports nothing, so that the static half never loads the measuring one.
"""
