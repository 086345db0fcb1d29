"""Benchmarks: a seeded session generator and the runner (over `mimo_sidecar.client`)."""
