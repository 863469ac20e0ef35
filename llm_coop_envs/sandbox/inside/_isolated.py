"""Each test in a process of its own (SandboxConfig.isolate_tests): the run's first process runs the
program only for the last test; it forks one child for each test before that, which runs the
program afresh and answers only that test's calls.

The run's first process is a fork of the warm interpreter, confined (_confine.py), that has read
its request and compiled the program, and nothing more: every test's child is forked from that
state, so no test's child holds anything an earlier test's program did (a global it counted, a
builtin it replaced, a module it patched). Between two tests this process kills the earlier
child, sweeps whatever that child started (this process is a child subreaper, so every orphan of
the run is its child), and empties the scratch folder (and /dev/shm, where the run has one of its
own): each test finds the folder as the first did. Tests run one after another, never side by
side, so no two of them can talk; their order stays the one the judge was given. The last test
runs in this process itself, once the child before it has been swept: it is then in the state
every child was forked in, and sparing that fork is what makes a run of one test cost no more
than without isolation.

Each child gets a socket of its own to the judge, made just before its fork and handed to the
judge (SCM_RIGHTS) over this process's channel, which no child holds: a process left over from
an earlier test cannot answer a later test's calls. This process sends each child's socket with
one byte, CHILD, as it forks the child; the judge's commands are single bytes (serve()).

A request may carry several programs, its variants (the coding envs' counterfactual runs, see
_variants.py): this process compiles them all, and the judge's VARIANT command picks the one that
the following tests' children run. Each child still runs one variant's program afresh for one
test, forked from the same state as every other, so no variant finds anything another did.
"""

from __future__ import annotations

import os
import signal
import socket
import struct

import _reap
import _runner

NEXT, MORE, LAST, CHILD, GO = b"n", b"m", b"l", b"c", b"g"
VARIANT, PICKED = b"v", b"a"  # VARIANT and a 2-byte index; PICKED once a child forked ahead is gone
INDEX = struct.Struct("!H")
_SHM = "/dev/shm"


def serve(request: dict) -> None:
    """The judge's commands, until it hangs up: NEXT, a child for the next test (the last one is
    ended first); MORE, a test follows the next one: where this process can list its children,
    that test's child is forked (and its socket sent) ahead, while the current test runs, and it
    runs nothing until the test before it has been swept (GO); LAST, the last test: this process
    runs it itself, on its own channel, once the last child has been swept (it would have had
    no further use, and a fork is spared); VARIANT, the variant the next children run: a child
    forked ahead for the last one is killed (swept with the rest), then PICKED is sent."""
    _reap.become_subreaper()
    control = socket.socket(fileno=_runner.CHANNEL_FD)
    scratch = os.getcwd()
    programs = _programs(request)
    request, code = programs[0]
    can_list = None  # whether the kernel lists our children: asked when first needed
    current = upcoming = None
    while True:
        message = control.recv(1)
        if message == VARIANT:
            picked = _pick(control, programs, upcoming)
            if picked is None:
                return  # not the judge's: end the run
            (request, code), upcoming = picked, None
            continue
        if message == MORE:
            can_list = _children() is not None if can_list is None else can_list
            if can_list and upcoming is None:
                upcoming = _fork_child(request, code, control)
            continue
        if message not in (NEXT, LAST):
            return  # the judge hung up: the run is over (and is swept by the forking side)
        if message == LAST and upcoming is not None:  # not asked for; swept with the rest
            os.kill(upcoming[0], signal.SIGKILL)
            upcoming = None
        if current is not None:
            _end_child(current[0], None if upcoming is None else upcoming[0])
            for folder in (scratch, _SHM) if request.get("own_shm") else (scratch,):
                _empty(folder)
        if message == LAST:
            _runner.run(request, code)
            return
        current, upcoming = upcoming or _fork_child(request, code, control), None
        _go(current)


def _programs(request: dict) -> list[tuple[dict, object]]:
    """(the request as one variant's child sees it, its program compiled) for each variant; the
    request itself when it has none. Compiling runs none of a program's code."""
    variants = request.get("variants")
    if not variants:
        return [(request, _runner.compiled(request["program"]))]
    base = {key: value for key, value in request.items() if key != "variants"}
    return [({**base, "program": v["program"], "entry_point": v.get("entry_point")},
             _runner.compiled(v["program"])) for v in variants]


def _pick(control: socket.socket, programs: list, upcoming: tuple[int, int] | None) -> tuple | None:
    """VARIANT: the variant the judge names (None for an index out of range), once a child forked
    ahead for the last one is killed (it is swept with the rest); PICKED tells the judge, after
    that child's socket (sent when it was forked)."""
    index = _read_index(control)
    if index is None or index >= len(programs):
        return None
    if upcoming is not None:
        os.kill(upcoming[0], signal.SIGKILL)
        os.close(upcoming[1])
    control.sendall(PICKED)
    return programs[index]


def _read_index(control: socket.socket) -> int | None:
    data = b""
    while len(data) < INDEX.size:
        chunk = control.recv(INDEX.size - len(data))
        if not chunk:
            return None
        data += chunk
    return INDEX.unpack(data)[0]


def _fork_child(request: dict, code: object, control: socket.socket) -> tuple[int, int]:
    """A child for a test, wired to a fresh socket (on CHANNEL_FD) that goes to the judge, and
    waiting for GO; returns its pid and the write end of its GO pipe."""
    judge_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            judge_end.close()
            os.close(go_write)
            os.dup2(child_end.fileno(), _runner.CHANNEL_FD)  # closes this child's copy of control
            child_end.close()
            if os.read(go_read, 1) != GO:
                os._exit(0)  # the run is over before this test's turn
            os.close(go_read)
            _runner.run(request, code)
        except BaseException:
            os._exit(1)
        os._exit(0)
    child_end.close()
    os.close(go_read)
    socket.send_fds(control, [CHILD], [judge_end.fileno()])
    judge_end.close()
    return pid, go_write


def _go(child: tuple[int, int]) -> None:
    os.write(child[1], GO)
    os.close(child[1])


def _end_child(pid: int, spare: int | None) -> None:
    """Kills the last test's child and everything it started (all of it is, or becomes, our
    child); returns when none is left but `spare`, the next test's waiting child. The run's
    processes are not dumpable, so /proc hides them from each other: our own list of children
    is what finds them (walking /proc is the fallback where the kernel keeps no such list)."""
    try:
        os.kill(pid, signal.SIGKILL)  # our own unreaped child: its pid cannot have been reused
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    while True:
        if _reap.reap_exited() and spare is None:
            return
        children = _children()
        if children is None:
            _reap.kill_run("plain", None, pid)
            return
        others = [child for child in children if child != spare]
        if not others:
            return
        for child in others:  # their own children become ours as they die: the next round
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(others[0], 0)


def _children() -> list[int] | None:
    """This process's children (zombies included), or None where the kernel does not list them."""
    try:
        with open(f"/proc/self/task/{os.getpid()}/children", "rb") as listing:
            return [int(pid) for pid in listing.read().split()]
    except OSError:
        return None


def _empty(folder: str) -> None:
    """Removes everything in `folder` (without following links). What cannot be removed (a
    folder the program made unreadable to its own uid) ends the run: the judge sees this
    process die, and the run's remaining tests fail."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                _empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
