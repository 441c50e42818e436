"""The seccomp filter every bubblewrap sandbox runs under.

A classic BPF program, built here (no libseccomp needed), that bwrap loads with
``--seccomp FD`` just before it executes the sandboxed command. It answers ``EPERM`` to the
system calls a sandboxed process never needs and that widen the kernel's attack surface or
reach outside the sandbox: ``ptrace`` and ``process_vm_*``, the kernel keyring, every way to
mount, ``bpf``, ``perf_event_open``, ``userfaultfd``, module loading and ``kexec``; it kills
a process that enters the kernel through another architecture's system call table (32-bit
``int 0x80``, x32), where the same calls have other numbers.
"""

from __future__ import annotations

import errno
import os
import struct

__all__ = ["DENIED", "seccomp_program"]

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
# machine -> (AUDIT_ARCH_*, table, first number of a foreign ABI sharing the arch: x32)
_ARCHES = {
    "x86_64": (0xC000003E, _X86_64, 0x40000000),
    "aarch64": (0xC00000B7, _AARCH64, None),
}
DENIED = tuple(_X86_64)

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The filter as ``struct sock_filter`` records, or None on an unknown architecture."""
    arch = _ARCHES.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit_arch, table, foreign = arch
    numbers = sorted(set(table.values()))
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, audit_arch),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    checks: list[int | None] = [None] if foreign is not None else []
    checks += numbers
    # the instructions after the checks: allow, then deny
    deny_at = len(prog) + len(checks) + 1
    for c in checks:
        here = len(prog)
        if c is None:
            prog.append((_JGE_K, deny_at - here - 1 + 1, 0, foreign or 0))  # x32: kill
        else:
            prog.append((_JEQ_K, deny_at - here - 1, 0, c))
    prog.append((_RET_K, 0, 0, _RET_ALLOW))
    prog.append((_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    if foreign is not None:
        prog.append((_RET_K, 0, 0, _RET_KILL_PROCESS))
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)
