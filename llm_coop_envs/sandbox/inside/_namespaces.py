"""The subprocess backend's network and PID namespaces, made once per warm interpreter (bwrap makes
the same ones with --unshare-net and --unshare-pid).

* PID: the judge calls `new_pid_namespace` just before it forks the forking side, which becomes the
  new namespace's init. Every run is its descendant: a run sees only its own namespace's processes
  in the /proc that `_confine.enter_view` mounts for it, `kill(-1)` from the forking side sweeps
  exactly the run, and when the forking side exits the kernel kills every process left in the
  namespace (no daemon outlives the warm interpreter). The judge stays in the host's namespace.
* Network: the forking side calls `new_network` before it builds the file view: a namespace whose
  only device is loopback, shared by that worker's runs (which run one at a time, each swept
  before the next starts) and by no other worker or host process.

Each returns None when the namespace was made, else why not (the host records it and warns once).

* User: as an ordinary user (no CAP_SYS_ADMIN), the warm interpreter first enters a user namespace
  of its own (`enter_user_namespace`), where the caller's uid and gid are root, so that it may make
  the namespaces above and the file view, as bwrap does for an ordinary user. Only those ids exist
  there: the runs cannot get fresh uids.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

_CLONE_NEWNET, _CLONE_NEWPID, _CLONE_NEWUSER = 0x40000000, 0x20000000, 0x10000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_IFREQ = "16sH22x"  # struct ifreq: the name, then ifr_flags in the union (40 bytes on Linux)

_libc = ctypes.CDLL(None, use_errno=True)


def _unshare(flag: int, what: str) -> str | None:
    if _libc.unshare(flag) != 0:
        return f"unshare({what}): {os.strerror(ctypes.get_errno())}"
    return None


def enter_user_namespace() -> None:
    """Moves the (single-threaded) caller into a new user namespace where its own uid and gid are
    0 and it holds every capability over the namespaces it makes next; raises OSError if not."""
    uid, gid = os.getuid(), os.getgid()
    why = _unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
    if why is not None:
        raise OSError(why)
    # setgroups must be denied before an unprivileged process may write its own gid_map.
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def new_pid_namespace() -> str | None:
    """The caller's next child starts a new PID namespace as its init (the caller stays put)."""
    return _unshare(_CLONE_NEWPID, "CLONE_NEWPID")


def new_network() -> str | None:
    """Moves the caller into a new network namespace and brings its loopback device up (so honest
    programs that talk to 127.0.0.1 within one run work, as under bwrap)."""
    why = _unshare(_CLONE_NEWNET, "CLONE_NEWNET")
    if why is None:
        _loopback_up()
    return why


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            current = fcntl.ioctl(sock, _SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0))
            flags = struct.unpack(_IFREQ, current)[1]
            fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))
        except OSError:
            pass  # still isolated, just without loopback: programs' own sockets fail, as offline
