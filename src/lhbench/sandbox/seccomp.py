"""The seccomp filter every bubblewrap sandbox runs under.

A classic BPF program, built here (no libseccomp needed), that bwrap loads with
``--seccomp FD`` just before it executes the sandboxed command. It answers ``EPERM`` to the
system calls a sandboxed process never needs and that widen the kernel's attack surface or
reach outside the sandbox: ``ptrace`` and ``process_vm_*``, the kernel keyring, every way to
mount, ``bpf``, ``perf_event_open``, ``userfaultfd``, module loading and ``kexec``; it kills
a process that enters the kernel through another architecture's system call table (32-bit
``int 0x80``, x32), where the same calls have other numbers. It also refuses (``EPERM``)
to set a set-user-ID or set-group-ID bit, through ``chmod`` and its kin or a mode given
at creation (``open``/``openat`` with ``O_CREAT``, ``creat``, ``mknod``), and answers
``openat2`` (whose mode it cannot read) with ``ENOSYS``, which callers fall back from.
"""

from __future__ import annotations

import errno
import os
import struct

__all__ = ["DENIED", "IPC_DENIED", "ipc_program", "seccomp_program"]

# name -> number, per architecture (from the kernel's syscall tables)
_X86_64 = {
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "kexec_load": 246,
    "kexec_file_load": 320,
}
_AARCH64 = {
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "bpf": 280,
    "perf_event_open": 241,
    "userfaultfd": 282,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "kexec_load": 104,
    "kexec_file_load": 294,
}
# Setting a set-user-ID or set-group-ID bit: the sandbox writes its workspace through an
# idmapped mount where its uid is root on disk (lhbench run as root), so a set-uid file it
# made would be set-uid root on the host. Each entry: number, the mode argument's index,
# and the flags argument's index where the mode counts only with O_CREAT or O_TMPFILE.
_X86_64_MODES = (
    (90, 1, None),  # chmod
    (91, 1, None),  # fchmod
    (268, 2, None),  # fchmodat
    (452, 2, None),  # fchmodat2
    (85, 1, None),  # creat
    (2, 2, 1),  # open
    (257, 3, 2),  # openat
    (133, 1, None),  # mknod
    (259, 2, None),  # mknodat
)
_AARCH64_MODES = (
    (52, 1, None),  # fchmod
    (53, 2, None),  # fchmodat
    (452, 2, None),  # fchmodat2
    (56, 3, 2),  # openat
    (33, 2, None),  # mknodat
)
_OPENAT2 = 437  # its mode is in a struct the filter cannot read: ENOSYS, callers fall back
_SETID = 0o6000
_CREATES = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE (x86_64 and aarch64)

# machine -> (AUDIT_ARCH_*, table, first number of a foreign ABI sharing the arch: x32, modes)
_ARCHES: dict[
    str, tuple[int, dict[str, int], int | None, tuple[tuple[int, int, int | None], ...]]
] = {
    "x86_64": (0xC000003E, _X86_64, 0x40000000, _X86_64_MODES),
    "aarch64": (0xC00000B7, _AARCH64, None, _AARCH64_MODES),
}
DENIED = (*_X86_64, "openat2", "set-uid/set-gid modes")

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_JA = 0x05
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000


def _arg(i: int) -> int:
    return 16 + 8 * i  # the low 32 bits of seccomp_data.args[i] (little-endian)


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The filter as ``struct sock_filter`` records, or None on an unknown architecture."""
    arch = _ARCHES.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit_arch, table, foreign, modes = arch
    # (code, true target, false target, k): targets are labels, resolved below
    prog: list[tuple[int, str | int, str | int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 0, "kill", audit_arch),
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if foreign is not None:
        prog.append((_JGE_K, "kill", 0, foreign))
    for nr in sorted(set(table.values())):
        prog.append((_JEQ_K, "deny", 0, nr))
    prog.append((_JEQ_K, "enosys", 0, _OPENAT2))
    for n, (nr, mode_arg, flags_arg) in enumerate(modes):
        nxt = f"mode{n + 1}"
        prog.append((_JEQ_K, 0, nxt, nr))
        if flags_arg is not None:
            prog.append((_LD_W_ABS, 0, 0, _arg(flags_arg)))
            prog.append((_JSET_K, 0, "allow", _CREATES))
        prog.append((_LD_W_ABS, 0, 0, _arg(mode_arg)))
        prog.append((_JSET_K, "deny", "allow", _SETID))
        prog.append((-1, nxt, 0, 0))  # label
        prog.append((_LD_W_ABS, 0, 0, 0))  # nr again, for the next block
    prog.append((-1, "allow", 0, 0))
    prog.append((_RET_K, 0, 0, _RET_ALLOW))
    prog.append((-1, "deny", 0, 0))
    prog.append((_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    prog.append((-1, "enosys", 0, 0))
    prog.append((_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS))
    prog.append((-1, "kill", 0, 0))
    prog.append((_RET_K, 0, 0, _RET_KILL_PROCESS))
    labels: dict[str, int] = {}
    real: list[tuple[int, str | int, str | int, int]] = []
    for ins in prog:
        if ins[0] == -1:
            labels[str(ins[1])] = len(real)
        else:
            real.append(ins)

    def off(target: str | int, at: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"seccomp jump to {target} out of range")
        return jump

    return b"".join(
        struct.pack("=HBBI", code, off(jt, i), off(jf, i), k)
        for i, (code, jt, jf, k) in enumerate(real)
    )


# System V and POSIX IPC objects live in the sandbox's IPC namespace, not in a process:
# in a sandbox that runs many commands (lhbench.sandbox.session), one command's shared
# memory, semaphores or message queues would still be there for the next. Each command
# there runs under this filter too: creating (or opening) one answers EPERM.
_IPC = {
    "x86_64": {"shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240},
    "aarch64": {"shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180},
}
IPC_DENIED = ("shmget", "semget", "msgget", "mq_open")


def ipc_program(machine: str | None = None) -> bytes | None:
    """A filter refusing :data:`IPC_DENIED` (None on an unknown architecture)."""
    machine = machine or os.uname().machine
    arch, table = _ARCHES.get(machine), _IPC.get(machine)
    if arch is None or table is None:
        return None
    audit_arch = arch[0]
    numbers = sorted(table.values())
    prog = [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ_K, 0, len(numbers) + 1, audit_arch),  # another ABI: the outer filter kills it
        (_LD_W_ABS, 0, 0, 0),
    ]
    for i, nr in enumerate(numbers):
        prog.append((_JEQ_K, len(numbers) - i, 0, nr))
    prog.append((_RET_K, 0, 0, _RET_ALLOW))
    prog.append((_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in prog)
