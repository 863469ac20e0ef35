"""CPU threads that fit the machine as it is now, not as it was when torch started.

torch starts one OpenMP thread per core, and every operator ends at a barrier that waits for all of
them. When another process holds a core, the thread scheduled beside it reaches each barrier a time
slice late, and a decode step (about a thousand operators) slows by far more than the lost core: with
three torch jobs on two cores one demo step took 18 minutes instead of 20 s. So the trainer sets the
thread count again before each rollout, update and evaluation (``cpu_threads="auto"``): the cores this
process may use (its CPU affinity, which containers and ``taskset`` set) less the runnable threads of
other processes seen right now, at least one. A fixed number (``cpu_threads=2``) turns the check off.

OpenMP's waiting policy is left as it is (threads spin briefly at each barrier): with one thread there
is nothing to wait for, and on a quiet machine ``OMP_WAIT_POLICY=PASSIVE`` made a step ~25 % slower
(``benchmarks/results/busy_machine.md``). A GPU run is unaffected: this only sizes the CPU's thread pool.
"""

from __future__ import annotations

import os
import time

SAMPLES = 5
"""Reads of the run queue per check, ``INTERVAL_S`` apart; their median is used (one read is noisy)."""
INTERVAL_S = 0.01


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_elsewhere() -> int:
    """Runnable threads of other processes right now (median of a few reads of ``/proc``); 0 where
    ``/proc`` is not readable."""
    reads = []
    for index in range(SAMPLES):
        running, own = _running_threads(), _own_running_threads()
        if running is None:
            return 0
        reads.append(max(running - own, 0))
        if index + 1 < SAMPLES:
            time.sleep(INTERVAL_S)
    return sorted(reads)[len(reads) // 2]


def fitting_threads(setting: int | str = "auto") -> int:
    """The thread count for ``setting``: a positive number as given, ``"auto"`` from the machine now."""
    if setting != "auto":
        return int(setting)
    return max(usable_cores() - busy_elsewhere(), 1)


def fit_threads(setting: int | str = "auto") -> int:
    """Set torch's intra-op thread count for ``setting`` (only when it changes); returns it."""
    import torch

    threads = fitting_threads(setting)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def _running_threads() -> int | None:
    """``procs_running`` of ``/proc/stat``: runnable threads on the whole machine, this one included."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            for line in stat:
                if line.startswith("procs_running"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _own_running_threads() -> int:
    """This process's threads in state R (running or runnable), the one reading included."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii", errors="replace") as stat:
                # the state follows the command name, which is in parentheses and may hold spaces
                if stat.read().rpartition(")")[2].split()[0] == "R":
                    count += 1
        except (OSError, IndexError):
            continue
    return max(count, 1)
