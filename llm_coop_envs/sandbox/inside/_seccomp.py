"""A seccomp filter for the forked child: the system calls a test program never needs, and that
would let a run outlive itself or leave the sandbox, fail with EPERM.

Denied: System V IPC and POSIX message queues (objects that outlive the process), the kernel
keyring, new namespaces (unshare, setns, clone with a CLONE_NEW* flag, clone3), every kind of
mount, ptrace and cross-process memory access, bpf, perf events, userfaultfd, io_uring (whose
operations bypass the filter), and administration calls. Everything else is allowed: the filter
is a deny list, so ordinary Python, threads, fork and subprocess keep working.

A classic-BPF program installed with prctl(PR_SET_SECCOMP) through ctypes; PR_SET_NO_NEW_PRIVS
comes first, which also makes set-uid binaries powerless for the rest of the run. The syscall
numbers are x86_64's; on another architecture `install` returns False and the run keeps only the
namespace and uid isolation (documented in docs/sandbox.md).
"""

from __future__ import annotations

import ctypes
import errno
import platform

# x86_64 system call numbers (asm/unistd_64.h; tests/sandbox/test_isolation.py checks them
# against the header when it is installed).
DENIED_X86_64 = {
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66,
    "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "unshare": 272, "setns": 308,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "syslog": 103, "acct": 163, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "finit_module": 313, "quotactl": 179,
    "kexec_load": 246, "kexec_file_load": 320, "lookup_dcookie": 212, "vhangup": 153,
}
CLONE_X86_64, CLONE3_X86_64 = 56, 435
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (CLONE_NEWTIME shares its
# bit with the exit signal in clone's flags and exists only for unshare/clone3, both denied).
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0 = 0, 4, 16  # struct seccomp_data; arg0's low word


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def program() -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions."""
    eperm = _RET_ERRNO | errno.EPERM
    code = [(_LD_ABS_W, 0, 0, _OFFSET_ARCH),
            (_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
            (_RET, 0, 0, _RET_KILL_PROCESS),
            (_LD_ABS_W, 0, 0, _OFFSET_NR),
            (_JGE, 0, 1, _X32_SYSCALL_BIT),  # the x32 ABI: another table of numbers
            (_RET, 0, 0, eperm)]
    for number in sorted(DENIED_X86_64.values()):
        code += [(_JEQ, 0, 1, number), (_RET, 0, 0, eperm)]
    # clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc use clone.
    code += [(_JEQ, 0, 1, CLONE3_X86_64), (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS),
             (_JEQ, 0, 3, CLONE_X86_64),
             (_LD_ABS_W, 0, 0, _OFFSET_ARG0),
             (_JSET, 0, 1, CLONE_NEW_FLAGS),
             (_RET, 0, 0, eperm),
             (_RET, 0, 0, _RET_ALLOW)]
    return code


def _compile() -> _Program | None:
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    code = program()
    instructions = (_Instruction * len(code))(*[_Instruction(*i) for i in code])
    compiled = _Program(len(code), instructions)
    compiled._keep = instructions  # the buffer must live as long as the struct points at it
    return compiled


# Built once in the warm interpreter, so a forked child only makes two prctl calls.
_FILTER = _compile()
AVAILABLE = _FILTER is not None
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def install() -> bool:
    """Installs the filter in this process (inherited by everything it starts; irrevocable).
    False when this architecture has no filter; OSError when the kernel refuses it."""
    if _FILTER is None:
        return False
    if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(_FILTER), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True
