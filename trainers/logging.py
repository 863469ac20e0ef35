"""Deprecated name of :mod:`trainers.metrics_log` (it shadowed the standard library's ``logging``)."""

import warnings

from trainers.metrics_log import *  # noqa: F403
from trainers.metrics_log import METRICS_FILE, SAMPLES_FILE, MetricsLogger, read_jsonl, read_metrics  # noqa: F401

warnings.warn("trainers.logging is now trainers.metrics_log; the old name will be removed.", DeprecationWarning, stacklevel=2)
