#!/usr/bin/env python3
"""Time a decoder process's start-up from the outside: what one slot of `--isolation process`'s
pool pays once (issue 30: "process start-up is paid once per pool slot, not per input").

Starts `PUSHPREP decoder` as the pool does (Sources/PushPrepSandbox/DecoderProcess.swift): an
empty environment, a socketpair end as descriptor 3, a fresh staging directory as descriptor 4,
/dev/null as 0 and 1; and times from just before posix_spawn to its first frame on the channel
(4 bytes big-endian length, then JSON), which must be its ready message. Then closes the
channel (the decoder exits on the hang-up) and reaps it. For scale, it also times
`PUSHPREP --version` (loading the same executable, nothing more) from spawn to exit.

Usage:
    decoder-startup.py PUSHPREP [--runs N] [--work DIR]

Prints one line:
    decoder startup: ready_ms=<median> min_ms=… max_ms=… exec_ms=<median of --version> runs=N
Exit status 0; 1 when a decoder does not send a ready message (its reason on standard error);
2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import socket
import statistics
import struct
import sys
import tempfile
import time


def read_exactly(sock: socket.socket, count: int, deadline: float) -> bytes:
    """`count` bytes, or fewer when the decoder closes the channel or the deadline passes."""
    data = b""
    while len(data) < count:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            break
        chunk = sock.recv(count - len(data))
        if not chunk:
            break
        data += chunk
    return data


def reap(pid: int) -> None:
    """Waits for `pid` (at most 10 s, then kills it)."""
    deadline = time.monotonic() + 10
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return
        time.sleep(0.01)


def ready_time(pushprep: str, work: str) -> float:
    """Seconds from spawning a decoder to its ready message."""
    staging = tempfile.mkdtemp(prefix="staging-", dir=work)
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    directory = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    null_in = os.open(os.devnull, os.O_RDONLY)
    null_out = os.open(os.devnull, os.O_WRONLY)
    try:
        start = time.monotonic()
        pid = os.posix_spawn(
            pushprep,
            [pushprep, "decoder"],
            {},
            file_actions=[
                (os.POSIX_SPAWN_DUP2, null_in, 0),
                (os.POSIX_SPAWN_DUP2, null_out, 1),
                (os.POSIX_SPAWN_DUP2, child.fileno(), 3),
                (os.POSIX_SPAWN_DUP2, directory, 4),
            ],
        )
        child.close()
        deadline = start + 30
        header = read_exactly(parent, 4, deadline)
        body = read_exactly(parent, struct.unpack(">I", header)[0], deadline) if len(header) == 4 else b""
        elapsed = time.monotonic() - start
        parent.close()
        reap(pid)
    finally:
        for fd in (directory, null_in, null_out):
            os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    if not isinstance(message, dict) or "ready" not in message:
        print(f"decoder-startup: the decoder's first message is not its ready message: {body[:200]!r}", file=sys.stderr)
        sys.exit(1)
    return elapsed


def exec_time(pushprep: str) -> float:
    """Seconds from spawning `pushprep --version` to its exit."""
    start = time.monotonic()
    pid = os.posix_spawn(
        pushprep,
        [pushprep, "--version"],
        {},
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ],
    )
    os.waitpid(pid, 0)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description="Time a decoder process's start-up.")
    parser.add_argument("pushprep", help="the pushprep executable")
    parser.add_argument("--runs", type=int, default=7, help="decoders to start, one after another (default 7)")
    parser.add_argument("--work", default=None, help="where the staging directories go (default: TMPDIR)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    if not os.access(args.pushprep, os.X_OK):
        parser.error(f"{args.pushprep} is not an executable")
    pushprep = os.path.abspath(args.pushprep)
    work = args.work or tempfile.gettempdir()
    os.makedirs(work, exist_ok=True)
    exec_time(pushprep)  # the executable into the page cache
    ready = [ready_time(pushprep, work) for _ in range(args.runs)]
    execs = [exec_time(pushprep) for _ in range(args.runs)]
    ms = lambda s: f"{s * 1000:.1f}"  # noqa: E731
    print(
        f"decoder startup: ready_ms={ms(statistics.median(ready))} min_ms={ms(min(ready))} "
        f"max_ms={ms(max(ready))} exec_ms={ms(statistics.median(execs))} runs={args.runs}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
