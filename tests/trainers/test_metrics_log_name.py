"""The metrics logger's module is ``trainers.metrics_log``; the old name, which shadowed the standard
library's ``logging``, is gone."""

import importlib

import pytest


def test_the_metrics_module_has_one_name():
    assert importlib.import_module("trainers.metrics_log").MetricsLogger
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("trainers.logging")
