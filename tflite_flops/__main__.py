"""``python -m tflite_flops`` → :func:`tflite_flops.cli.console` (:func:`tflite_flops.cli.main` in its process)."""

import sys

from .cli import console

if __name__ == "__main__":
    sys.exit(console())
