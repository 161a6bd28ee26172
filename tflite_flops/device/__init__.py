"""What ``benchmark_model`` measured on a device, read from the files it writes and joined to a Report.

* :mod:`~tflite_flops.device.op_profile`: its per-op profile as text or CSV (``--enable_op_profiling``);
* :mod:`~tflite_flops.device.benchmark_protos`: its protocol-buffer outputs: where each op ran
  (``ModelRuntimeDetails``), the whole-model figures (``BenchmarkResult``), the op profile as a proto;
* :mod:`~tflite_flops.device.benchmark_logs`: the whole-model time from benchmark_model's log or a logcat
  capture of it ("Inference timings in us"), or litert-benchmark's ``--result_json`` or stdout: what phones
  and device farms return;
* :mod:`~tflite_flops.device.import_profile`: ``import-profile``: each file checked against the model and
  joined to its report.

Nothing here runs a model: the files come from a device. On the measure layer (docs/contributing.md).
"""
