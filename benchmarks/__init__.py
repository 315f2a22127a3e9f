"""kubesched benchmarks: scheduler_perf-style workloads, timed one case per subprocess.

``python -m benchmarks`` runs every full-size case and prints a table; see ``benchmarks.__main__``.
"""
