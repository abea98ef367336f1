#!/usr/bin/env python3
"""Refuses a tuple literal that has an element before a `try await` inside it.

Swift 6.3's optimiser loses a tuple's earlier elements across a throwing suspension in a later
one: `return (index, .ok(try await publish(x)))` in a task group's child came back with index 0
in every release build, while debug builds were right (issue 26 §0: `process --store s3://`
wrote a corrupt manifest). Binding the awaited value first is correct in both:

    let published = try await publish(x)
    return (index, .ok(published))

A call's arguments, `f(a, try await g())`, and a struct's initialiser were measured correct and
are not flagged: a parenthesis counts as a tuple's when no name, `)`, `]`, `?`, `!` or `>`
stands right before it. Strings and comments are skipped.

Usage: lint-tuple-await.py DIR...; prints file:line: for each and exits 1 when any is found.
"""

import os
import re
import sys

TRY_AWAIT = re.compile(r"try[?!]?\s+await\b")
# Words after which a parenthesis opens an expression, not a call's arguments.
KEYWORDS = {"return", "in", "throw", "case", "try", "await", "yield", "where", "else", "is", "as", "then"}


def code_only(text):
    """`text` with string literals' contents and comments blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif re.match(r'#+"', text[i:]):
            hashes = re.match(r'#+', text[i:]).group(0)
            opener = hashes + ('"""' if text.startswith('"""', i + len(hashes)) else '"')
            closer = opener[len(hashes):] + hashes
            j = text.find(closer, i + len(opener))
            j = n if j < 0 else j + len(closer)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('"' + "".join(ch if ch == "\n" else " " for ch in text[i + 1 : j - 1]) + '"')
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append('"' + " " * (j - i - 2) + '"' if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def findings(text):
    """Line numbers of `try await`s inside a tuple literal after one of its elements."""
    code = code_only(text)
    # Per open parenthesis: [is a tuple literal, a top-level comma seen]; a brace is None, so a
    # closure's body is not taken for part of the tuple around it.
    stack = []
    lines = []
    i = 0
    while i < len(code):
        c = code[i]
        if c == "(":
            before = code[:i].rstrip()
            previous = before[-1:] if before else ""
            word = re.search(r"[A-Za-z_][A-Za-z0-9_]*$", before)
            is_call = previous.isalnum() or previous in "_)]?!>"
            if word and word.group(0) in KEYWORDS:
                is_call = False
            stack.append([not is_call, False])
        elif c == "{":
            stack.append(None)
        elif c in ")}":
            if stack:
                stack.pop()
        elif c == "," and stack and stack[-1] is not None:
            stack[-1][1] = True
        elif c == "t" and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            match = TRY_AWAIT.match(code, i)
            if match:
                for entry in reversed(stack):
                    if entry is None:
                        break
                    if entry[0] and entry[1]:
                        lines.append(code.count("\n", 0, i) + 1)
                        break
                i = match.end()
                continue
        i += 1
    return lines


def report(roots, find, message):
    """Prints `path:line: message` for each line `find(text)` returns in the .swift files under
    `roots`; 1 when there was any, else 0. Shared with lint-raced-sleep.py."""
    found = 0
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as handle:
                    for line in find(handle.read()):
                        print(f"{path}:{line}: {message}")
                        found += 1
    return 1 if found else 0


def main(roots):
    return report(
        roots, findings, "a tuple element before `try await` in the same tuple literal "
        "(Swift 6.3's optimiser loses it): bind the awaited value with let first")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["Sources"]))
