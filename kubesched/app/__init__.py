"""The commands: ``kubesched`` and its subcommands, ``run`` with its HTTP server, and ``snapshot``."""
