#!/usr/bin/env python3
"""Refuses a `Task.sleep` inside a task group's child (`addTask { ... }`) in Sources.

A child that sleeps is, nearly always, a deadline raced against the work. When the work wins
the group cancels the sleep, and on Linux a cancelled `Task.sleep` stays scheduled, with its
task and what it holds, until the time it was asked to sleep to (swiftlang/swift#60441): per
request, per fetch or per job that is memory kept for the whole timeout (issue 32: 0.75 KB per
request, forever, at a 300 s request deadline; every job's timeout task until the job's
deadline). Use `withDeadline` or an `Alarm` (Sources/PushPrepCore/IO/Deadline.swift), which is
freed as soon as it is cancelled.

The closure is found by matching braces, so a sleep inside a loop in the child is found too
(the grep this replaces stopped at the first `}`). Strings and comments are skipped.

Usage: lint-raced-sleep.py DIR...; prints file:line: for each and exits 1 when any is found.
"""

import importlib.util
import os
import re
import sys

spec = importlib.util.spec_from_file_location(
    "lint_tuple_await", os.path.join(os.path.dirname(os.path.abspath(__file__)), "lint-tuple-await.py"))
lint_tuple_await = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lint_tuple_await)

ADD_TASK = re.compile(r"\baddTask(?:UnlessCancelled)?\s*(?:\([^)]*\))?\s*\{")
SLEEP = re.compile(r"\bTask\.sleep\b")


def findings(text):
    """Line numbers of the `Task.sleep`s inside `addTask` closures of `text`."""
    code = lint_tuple_await.code_only(text)
    lines = []
    for match in ADD_TASK.finditer(code):
        depth, i = 1, match.end()
        while i < len(code) and depth > 0:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        for sleep in SLEEP.finditer(code, match.end(), i):
            lines.append(code.count("\n", 0, sleep.start()) + 1)
    return sorted(set(lines))


def main(directories):
    return lint_tuple_await.report(
        directories, findings, "Task.sleep in a task group's child; use withDeadline or an Alarm "
        "(a cancelled sleep stays scheduled until its deadline, swiftlang/swift#60441)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["Sources"]))
