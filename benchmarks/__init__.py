"""Benchmarks: a seeded session generator, a minimal stdio JSON-RPC client and the runner."""
