"""The metrics logger's module is ``trainers.metrics_log``; the old name still works, with a warning."""

import importlib
import sys

import pytest


def test_old_module_name_warns_and_gives_the_same_objects():
    from trainers import metrics_log

    sys.modules.pop("trainers.logging", None)
    with pytest.warns(DeprecationWarning, match="trainers.metrics_log"):
        old = importlib.import_module("trainers.logging")
    assert old.MetricsLogger is metrics_log.MetricsLogger and old.read_metrics is metrics_log.read_metrics
