"""What the kernel tracers in scripts/ share: compiling a BPF program for the running kernel
(its types from the kernel's BTF), loading and attaching it through libbpf by file descriptor
only (nothing pinned, so it is detached when the script ends, fails, is interrupted or dies),
reading its maps and ring buffers, and running the traced command as a shell would.

Needs root, bpftool, clang and libbpf (scripts/setup installs them).
"""

from __future__ import annotations

import ctypes
import platform
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

BPF_ARCH = {"x86_64": "x86", "aarch64": "arm64", "riscv64": "riscv", "s390x": "s390"}


def compile_program(source: Path, workdir: Path, tool: str) -> Path:
    """The BPF object of `source` for this kernel, built in `workdir`; `tool` names the
    script in error messages."""
    clang = shutil.which("clang-19") or shutil.which("clang")
    if clang is None:
        sys.exit(f"{tool}: no clang-19 or clang (scripts/setup installs it)")
    arch = BPF_ARCH.get(platform.machine())
    if arch is None:
        sys.exit(f"{tool}: no BPF target for machine {platform.machine()!r}")
    vmlinux = workdir / "vmlinux.h"
    with vmlinux.open("w") as header:
        subprocess.run(
            ["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c"],
            stdout=header,
            check=True,
        )
    obj = workdir / (source.name.removesuffix(".c") + ".o")
    subprocess.run(
        [clang, "-O2", "-g", "-target", "bpf", f"-D__TARGET_ARCH_{arch}", f"-I{workdir}"]
        + ["-c", str(source), "-o", str(obj)],
        check=True,
    )
    return obj


# `int (*ring_buffer_sample_fn)(void *ctx, void *data, size_t size)`
SAMPLE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class Tracer:
    """A BPF object loaded and all its programs attached through libbpf; detached and
    closed on leaving the block."""

    def __init__(self, obj_path: Path) -> None:
        lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
        vp = ctypes.c_void_p
        for name, restype, argtypes in [
            ("bpf_object__open_file", vp, [ctypes.c_char_p, vp]),
            ("bpf_object__load", ctypes.c_int, [vp]),
            ("bpf_object__next_program", vp, [vp, vp]),
            ("bpf_program__attach", vp, [vp]),
            ("bpf_program__name", ctypes.c_char_p, [vp]),
            ("bpf_object__find_map_fd_by_name", ctypes.c_int, [vp, ctypes.c_char_p]),
            ("bpf_map_lookup_elem", ctypes.c_int, [ctypes.c_int, vp, vp]),
            ("bpf_link__destroy", ctypes.c_int, [vp]),
            ("bpf_object__close", None, [vp]),
            ("ring_buffer__new", vp, [ctypes.c_int, SAMPLE_FN, vp, vp]),
            ("ring_buffer__poll", ctypes.c_int, [vp, ctypes.c_int]),
            ("ring_buffer__consume", ctypes.c_int, [vp]),
            ("ring_buffer__free", None, [vp]),
        ]:
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        self.lib = lib
        self.links: list[int] = []
        self.rings: list[tuple[int, object]] = []
        self.obj = lib.bpf_object__open_file(str(obj_path).encode(), None)
        if not self.obj:
            raise OSError(ctypes.get_errno(), f"libbpf cannot open {obj_path}")
        try:
            if (err := lib.bpf_object__load(self.obj)) != 0:
                raise OSError(-err, "libbpf cannot load the program (its log is above)")
            prog = lib.bpf_object__next_program(self.obj, None)
            while prog:
                link = lib.bpf_program__attach(prog)
                if not link:
                    name = lib.bpf_program__name(prog).decode()
                    raise OSError(ctypes.get_errno(), f"libbpf cannot attach {name}")
                self.links.append(link)
                prog = lib.bpf_object__next_program(self.obj, prog)
        except BaseException:
            self.close()
            raise

    def map_fd(self, name: str) -> int:
        fd = self.lib.bpf_object__find_map_fd_by_name(self.obj, name.encode())
        if fd < 0:
            raise OSError(-fd, f"the program has no map `{name}`")
        return fd

    def lookup_u64(self, map_name: str, keys: range) -> list[int]:
        """An array map of u64 values, at `keys`."""
        fd = self.map_fd(map_name)
        values = []
        for k in keys:
            key, value = ctypes.c_uint32(k), ctypes.c_uint64(0)
            if self.lib.bpf_map_lookup_elem(fd, ctypes.byref(key), ctypes.byref(value)) != 0:
                raise OSError(ctypes.get_errno(), f"cannot read {map_name}[{k}]")
            values.append(value.value)
        return values

    def ring(self, map_name: str, on_sample: Callable[[bytes], None]) -> int:
        """Opens the ring buffer map `map_name`; `poll(ring)` hands each sample to
        `on_sample` as bytes."""

        def sample(_ctx: int | None, data: int | None, size: int) -> int:
            on_sample(ctypes.string_at(data, size))
            return 0

        callback = SAMPLE_FN(sample)
        rb = self.lib.ring_buffer__new(self.map_fd(map_name), callback, None, None)
        if not rb:
            raise OSError(ctypes.get_errno(), f"libbpf cannot open ring buffer {map_name}")
        # The callback object must live as long as the ring buffer.
        self.rings.append((rb, callback))
        return rb

    def poll(self, rb: int, timeout_ms: int) -> None:
        n = self.lib.ring_buffer__poll(rb, timeout_ms)
        if n < 0 and -n != 4:  # EINTR: a signal; the next poll goes on
            raise OSError(-n, "cannot poll the ring buffer")

    def drain(self, rb: int) -> None:
        n = self.lib.ring_buffer__consume(rb)
        if n < 0:
            raise OSError(-n, "cannot read the ring buffer")

    def close(self) -> None:
        for rb, _callback in self.rings:
            self.lib.ring_buffer__free(rb)
        self.rings.clear()
        for link in self.links:
            self.lib.bpf_link__destroy(link)
        self.links.clear()
        if self.obj:
            self.lib.bpf_object__close(self.obj)
            self.obj = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def run(command: list[str], while_running: Callable[[], None] | None = None) -> int:
    """Runs the command to its end, as a shell would: Ctrl-C reaches it too (the same process
    group), a termination request to this script is passed on to it, and its exit status
    comes back (128 + the signal's number if a signal ended it). `while_running` is called
    again and again until it ends (it should block for a short while, polling)."""
    child = subprocess.Popen(command)
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: child.send_signal(signum))
    try:
        while True:
            try:
                if while_running is None:
                    status = child.wait()
                    break
                while_running()
                if (status := child.poll()) is not None:
                    break
            except KeyboardInterrupt:
                continue
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 128 - status if status < 0 else status
