"""Subcommands of the CLI, one module each (``HELP``, ``add_arguments``, ``run``)."""
