"""Performance benchmarks: sandbox throughput and profile, the training step, distributed training
throughput, and the vLLM backend's greedy check. ``python -m benchmarks.perf`` runs the first two and
collects them (:mod:`benchmarks.perf.collect`); each runs alone as ``python -m benchmarks.perf.<name>``.
Results go to ``benchmarks/results/``."""
