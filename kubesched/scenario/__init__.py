"""The input pipeline: manifests and documents read, validated, ordered and admission-checked, the one
path by which simulate, capacity, plan, sweeps and the benchmarks get their objects; and the generators
that write scenarios."""
