"""torch's CPU threads fit the machine as it is: the cores this process may use less the ones other
processes keep busy, at least one; a number fixes them."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from trainers import threads


def test_a_number_is_taken_as_given_and_auto_stays_within_the_usable_cores():
    assert threads.fitting_threads(3) == 3
    assert 1 <= threads.fitting_threads("auto") <= threads.usable_cores()


def test_a_busy_process_elsewhere_is_seen_and_takes_a_core_from_auto(monkeypatch):
    hog = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        time.sleep(0.3)
        assert threads.busy_elsewhere() >= 1
        monkeypatch.setattr(threads, "usable_cores", lambda: 2)
        monkeypatch.setattr(threads, "busy_elsewhere", lambda: 1)
        assert threads.fitting_threads("auto") == 1
        monkeypatch.setattr(threads, "busy_elsewhere", lambda: 5)
        assert threads.fitting_threads("auto") == 1  # never fewer than one
    finally:
        hog.kill()
        hog.wait()


def test_this_process_own_threads_are_not_counted_as_busy_elsewhere():
    assert threads._own_running_threads() >= 1  # the reading thread itself is running


@pytest.mark.parametrize("value", [0, -1, "many", 1.5])
def test_the_config_refuses_anything_but_auto_or_a_positive_count(value):
    from trainers.config import TrainConfig

    with pytest.raises(ValueError, match="cpu_threads"):
        TrainConfig(cpu_threads=value)
