"""Evaluation for llm-coop-envs: metrics, the baselines of the literature, reports and benchmarks.

- :mod:`benchmarks.metrics`: pass@k, accuracy@k, cooperation rate and schemes, writing metrics.
- :mod:`benchmarks.baselines`: single model, naive concatenation, sequential pipeline, discussion,
  the env's own protocol, and trained checkpoints, all run through the env API.
- :mod:`benchmarks.reporting`: markdown tables, JSON and PNG plots.
- :mod:`benchmarks.learning`: ``llm-coop bench``, algorithms x seeds at an equal budget with
  bootstrap confidence intervals and learning curves.
- :mod:`benchmarks.perf`: performance benchmarks (``python -m benchmarks.perf``).
- :mod:`benchmarks.writing`: studies of the writing reward on real text.
- ``llm-coop eval`` (:func:`benchmarks.cli.eval_command`, :func:`benchmarks.evaluate.evaluate`).

``benchmarks/README.md`` lists each folder with the command that runs it.
"""
