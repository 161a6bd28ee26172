"""``python -m tflite_flops`` → :func:`tflite_flops.cli.main`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
