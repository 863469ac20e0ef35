"""Metrics: pass@k and accuracy@k, cooperation rate and schemes, writing metrics, efficiency."""

from benchmarks.metrics.cooperation import (
    SCHEMES,
    CooperationAnalysis,
    analyze_cooperation,
    classify_scheme,
    cooperation_rate,
    scheme_distribution,
)
from benchmarks.metrics.pass_at_k import DEFAULT_KS, accuracy_at_k, mean_accuracy_at_k, mean_pass_at_k, pass_at_k

__all__ = [
    "DEFAULT_KS",
    "SCHEMES",
    "CooperationAnalysis",
    "accuracy_at_k",
    "analyze_cooperation",
    "classify_scheme",
    "cooperation_rate",
    "mean_accuracy_at_k",
    "mean_pass_at_k",
    "pass_at_k",
    "scheme_distribution",
]
