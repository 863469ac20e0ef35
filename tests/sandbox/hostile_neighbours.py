"""Hostile programs against a run going on at the same time on another warm interpreter: sockets
(abstract, path, TCP and UDP on loopback), signals, /proc and shared memory.

Each check runs a `listener` and a `reacher` side by side (two workers) and returns True when the
reacher got nothing through. A check is only as good as its attack, so `works_within_one_run`
runs both halves of each attack inside one program, where they must meet: a check that passes
there cannot be passing for a typo.
"""

from __future__ import annotations

import random
import uuid
from concurrent.futures import ThreadPoolExecutor

from llm_coop_envs.sandbox import SandboxConfig, run_tests, run_tests_batch

# The isolation a check needs (ExecutionResult.isolation); a backend without it skips the check.
NEEDS = {"abstract_socket_between_runs": "network", "tcp_between_runs": "network",
         "udp_between_runs": "network", "processes_of_other_runs": "pid_namespace",
         "host_processes_in_proc": "pid_namespace", "name_left_for_the_next_run": "pid_namespace"}

_WAIT_S = 2.5  # how long a listener waits; reachers try for most of it


def _config(backend: str) -> SandboxConfig:
    return SandboxConfig(backend=backend, timeout_s=8.0, test_timeout_s=1.0, memory_mb=256,
                         max_processes=16, max_file_mb=4, max_output_bytes=4096,
                         preload_modules=SandboxConfig().preload_modules + ("socket", "ctypes"))


def _side_by_side(backend: str, listener: str, reacher: str) -> tuple[str, str]:
    """Both programs at once, each on a warm interpreter of its own (a pool of two, whatever the
    number of cores: a batch could queue both on one interpreter, one after the other)."""
    with ThreadPoolExecutor(2) as threads:
        results = list(threads.map(
            lambda program: run_tests(program, [], None, _config(backend), _pool_size=2),
            (listener, reacher)))
    return results[0].stdout.strip(), results[1].stdout.strip()


def name_left_for_the_next_run(backend: str) -> bool:
    """A run names its process and exits; the next run on the same interpreter looks for the name
    (an unreaped zombie keeps its name and exit status: a message to the next run)."""
    name = f"left-{uuid.uuid4().hex[:10]}"
    first = f"import ctypes\nctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\n"
    second = ("import glob\nseen = set()\nfor p in glob.glob('/proc/[0-9]*/task/*/comm'):\n"
              "    try: seen.add(open(p).read().strip())\n    except OSError: pass\n"
              f"print({name!r} in seen)")
    results = run_tests_batch([(first, [], None), (second, [], None)], _config(backend), workers=1)
    return results[1].stdout.strip() == "False"


def _retry(body: str) -> str:
    """A reacher's loop: `body` until it succeeds (prints 'reached') or time is up."""
    indented = "\n".join("        " + line for line in body.splitlines())
    return ("import time, socket\nend = time.monotonic() + %.1f\nreached = False\n"
            "while time.monotonic() < end and not reached:\n    try:\n%s\n        reached = True\n"
            "    except OSError:\n        time.sleep(0.05)\nprint('reached' if reached else 'nothing')\n"
            % (_WAIT_S - 0.5, indented))


def _attacks() -> dict[str, tuple[str, str]]:
    """(listener, reacher) per check, with a fresh name and port each time."""
    name, port = f"coop-{uuid.uuid4().hex[:12]}", random.randint(20000, 60000)
    accept = ("s.settimeout(%.1f)\ntry:\n    s.accept(); print('accepted')\nexcept OSError:\n"
              "    print('alone')\n" % _WAIT_S)
    return {
        "abstract_socket_between_runs": (
            f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind(b'\\0{name}')\ns.listen()\n" + accept,
            _retry(f"socket.socket(socket.AF_UNIX).connect(b'\\0{name}')")),
        "tcp_between_runs": (
            f"import socket\ns = socket.socket()\ns.bind(('127.0.0.1', {port}))\ns.listen()\n" + accept,
            _retry(f"socket.create_connection(('127.0.0.1', {port}), timeout=0.2)")),
        "udp_between_runs": (
            f"import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"s.bind(('127.0.0.1', {port}))\ns.settimeout({_WAIT_S})\n"
            "try:\n    s.recv(16); print('accepted')\nexcept OSError:\n    print('alone')\n",
            _retry(f"u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                   f"u.sendto(b'x', ('127.0.0.1', {port}))\ntime.sleep(0.05)\nraise OSError")),
        "path_socket_between_runs": (
            f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('{name}')\ns.listen()\n" + accept,
            _retry(f"import glob\nfor p in ['{name}'] + glob.glob('/tmp/**/{name}', recursive=True) + "
                   f"glob.glob('/**/{name}'):\n    socket.socket(socket.AF_UNIX).connect(p)\n"
                   "    break\nelse:\n    raise OSError")),
        "shared_memory_between_runs": (
            f"import time\nopen('/dev/shm/{name}', 'w').write('x')\ntime.sleep({_WAIT_S})\n"
            "print('alone')\n",
            _retry(f"open('/dev/shm/{name}').read()")),
        "processes_of_other_runs": (
            f"import ctypes, time\nctypes.CDLL(None).prctl(15, b'{name[:15]}', 0, 0, 0)\n"
            f"time.sleep({_WAIT_S})\nprint('alone')\n",
            _retry("import glob\nseen = []\nfor p in glob.glob('/proc/[0-9]*/task/*/comm'):\n"
                   "    try: seen.append(open(p).read().strip())\n"
                   "    except OSError: pass\n"
                   f"if {name[:15]!r} not in seen: raise OSError")),
    }


def _check(name: str):
    def check(backend: str) -> bool:
        listener, reacher = _attacks()[name]
        heard, got = _side_by_side(backend, listener, reacher)
        return got == "nothing" and heard in ("alone", "")
    check.__name__ = name
    return check


def signal_between_runs(backend: str) -> bool:
    """kill(-1) and a kill of every pid the reacher can see must not end a concurrent run."""
    survivor = f"import time\ntime.sleep({_WAIT_S})\nprint('alive')\n"
    killer = ("import os, signal, time\ntime.sleep(0.5)\n"
              "for p in [-1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
              "    try: os.kill(p, signal.SIGKILL) if p != os.getpid() else None\n"
              "    except OSError: pass\n")
    alive, _ = _side_by_side(backend, survivor, killer)
    return alive == "alive"


def host_processes_in_proc(backend: str) -> bool:
    """A run lists /proc: it must see its own namespace only (at most the warm interpreter's
    init, the forking side, itself and an earlier run not yet reaped), never the caller."""
    program = ("import os\nseen = []\nfor p in filter(str.isdigit, os.listdir('/proc')):\n"
               "    try: seen.append(open(f'/proc/{p}/cmdline', 'rb').read())\n"
               "    except OSError: pass\n"
               "print(len(seen), any(b'pytest' in c or b'tests.sandbox' in c for c in seen))")
    count, caller_seen = run_tests(program, [], None, _config(backend)).stdout.split()
    return int(count) <= 5 and caller_seen == "False"


BETWEEN_RUNS = {name: _check(name) for name in _attacks()}
CHECKS = {**BETWEEN_RUNS, "signal_between_runs": signal_between_runs,
          "host_processes_in_proc": host_processes_in_proc,
          "name_left_for_the_next_run": name_left_for_the_next_run}


def works_within_one_run(backend: str, name: str) -> bool:
    """Both halves of attack `name` in one program (listener in a thread): they must meet."""
    listener, reacher = _attacks()[name]
    program = ("import threading, io, contextlib\nheard = io.StringIO()\n"
               f"def listen():\n    with contextlib.redirect_stdout(heard):\n        exec({listener!r}, {{}})\n"
               "t = threading.Thread(target=listen)\nt.start()\n"
               f"exec({reacher!r}, {{}})\nt.join()\nprint(heard.getvalue().strip())\n")
    printed = run_tests(program, [], None, _config(backend)).stdout.split()
    return "reached" in printed or "accepted" in printed


def skip_reason(backend: str, check: str, isolation: tuple[str, ...]) -> str | None:
    """Why `check` is not promised on `backend` here (docs/sandbox.md), or None."""
    need = NEEDS.get(check)
    if need and need not in isolation:
        return f"{backend} has no {need} here (its results' isolation: {isolation})"
    if check == "signal_between_runs" and not {"run_uid", "pid_namespace"} & set(isolation):
        return f"{backend} runs share the caller's uid here: kill(-1) would reach the caller"
    return None
