#!/usr/bin/env python3
"""Run a command and measure its whole process tree: wall time, CPU time, peak memory.

`make bench` uses it where a run is more than one process (`pushprep process --isolation
process`: the parent and its decoder processes). GNU time's maximum resident set size is the
largest *single* process of the tree (wait4's ru_maxrss is a maximum over the process and its
reaped children, not a sum), so it cannot show what the tree holds at once. This samples /proc
instead (no cgroup needed): every --interval it finds the tree (the command's process and its
descendants, from /proc/<pid>/task/<tid>/children) and reads each one's VmRSS and VmHWM from
/proc/<pid>/status.

Three memory figures:
  tree_peak_kb  the largest sum of VmRSS over the tree at one sample (a peak between two
                samples is missed; file pages the processes share, the executable and its
                libraries, count once per process, as RSS does);
  hwm_sum_kb    the sum over every process seen of its own peak (VmHWM, last value read): an
                upper bound of the above, when the processes peak at different times;
  shared_once_kb  the largest sum at one sample of each process's anonymous and shmem pages
                (RssAnon + RssShmem) plus the largest RssFile among them: file pages counted
                once, about what a cgroup (a container's memory limit) is charged, as the
                decoders map the same executable and libraries as their parent.
The command's own exact peak (wait4's ru_maxrss: the largest one process of the tree that it
reaped) is written too, and should match GNU time's %M.

Usage:
    rss-tree.py -o OUT [--interval SECONDS] -- COMMAND [ARG...]

Writes one line to OUT:
    elapsed_s cpu_s tree_peak_kb hwm_sum_kb maxrss_kb processes shared_once_kb
(elapsed from just before the start to the reap, monotonic clock; cpu_s user + system of the
command and the children it reaped, from wait4). Standard input, output and error are the
command's. Exit status: the command's (128 + N when signal N ended it); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def children(pid: int) -> list[int]:
    """The children of every thread of `pid` (a process's children are per spawning thread)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue  # the thread (or the process) ended meanwhile
    return found


def tree(root: int) -> list[int]:
    """`root` and its descendants, breadth first."""
    pids, i = [root], 0
    while i < len(pids):
        pids.extend(c for c in children(pids[i]) if c not in pids)
        i += 1
    return pids


FIELDS = ("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "RssShmem:")


def memory(pid: int) -> dict[str, int] | None:
    """VmRSS, VmHWM, RssAnon, RssFile and RssShmem in KiB, or None for a process gone (or a
    zombie, which has none of them)."""
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(FIELDS):
                    key, value = line.split()[:2]
                    found[key] = int(value)
    except (OSError, ValueError):
        return None
    return found if len(found) == len(FIELDS) else None


def main() -> int:
    parser = argparse.ArgumentParser(description="Measure a command's whole process tree.")
    parser.add_argument("-o", "--output", required=True, help="file the result line is written to")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between samples (default 0.01)")
    parser.add_argument("--rescan", type=int, default=5, help="find the tree again every N samples (default 5)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if args.interval <= 0 or args.rescan < 1:
        parser.error("--interval must be > 0 and --rescan >= 1")

    start = time.monotonic()
    try:
        child = subprocess.Popen(command)
    except OSError as error:
        print(f"rss-tree: cannot run {command[0]}: {error}", file=sys.stderr)
        return 127
    pids: list[int] = [child.pid]
    hwm: dict[int, int] = {}
    tree_peak = 0
    shared_once_peak = 0
    sample = 0
    while True:
        # Reaped here (not by Popen), to get the rusage of the command and its reaped children.
        reaped, status, usage = os.wait4(child.pid, os.WNOHANG)
        if reaped == child.pid:
            elapsed = time.monotonic() - start
            break
        if sample % args.rescan == 0:
            pids = tree(child.pid)
        total = private = files = 0
        for pid in pids:
            m = memory(pid)
            if m is None:
                continue
            total += m["VmRSS:"]
            private += m["RssAnon:"] + m["RssShmem:"]
            files = max(files, m["RssFile:"])
            hwm[pid] = max(hwm.get(pid, 0), m["VmHWM:"])
        tree_peak = max(tree_peak, total)
        shared_once_peak = max(shared_once_peak, private + files)
        sample += 1
        time.sleep(args.interval)
    child.returncode = 0  # reaped above; keeps Popen from waiting for it again
    cpu = usage.ru_utime + usage.ru_stime
    # wait4's peak is one process's (the command's or a reaped child's): the tree held at least
    # that at once. It is the command's own exact peak when no other process was seen.
    tree_peak = max(tree_peak, usage.ru_maxrss)
    if len(hwm) <= 1:
        hwm[child.pid] = max(hwm.get(child.pid, 0), usage.ru_maxrss)
    with open(args.output, "w") as f:
        f.write(
            f"{elapsed:.3f} {cpu:.2f} {tree_peak} {sum(hwm.values())} {usage.ru_maxrss} {len(hwm)} {shared_once_peak}\n"
        )
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
