#!/usr/bin/python3
"""Reads every file in a directory as JSON with Python's json module and prints what it found.

Usage: json-canonical.py DIRECTORY

The tests compare PushPrep's JSON parser with this one (Python's json.loads with
object_pairs_hook, so that member order and repeated keys are seen). One JSON line per file,
in name order:

  {"file": NAME, "ok": false, "error": MESSAGE}            not JSON (to Python)
  {"file": NAME, "ok": true, "canonical": TEXT,            JSON
   "duplicates": N, "depth": D, "loneSurrogate": BOOL}

TEXT is the value written compactly: an object's members in the order of each key's first
occurrence with the value of its last (what a dict does), numbers as their literal, strings
with every character outside ' '..'~' escaped as \\uXXXX (UTF-16, lowercase hex) except the
short escapes \\" \\\\ \\b \\f \\n \\r \\t. N counts members whose key repeated an earlier one
of the same object, in every object read (also one a later repeat discards); D is the number of nested arrays and objects (a scalar is 0, [] is 1). NaN and Infinity are refused,
and so is text that is not UTF-8 (json.loads would also take UTF-16 and UTF-32, and a BOM).
"""

import json
import os
import sys


class Refused(ValueError):
    pass


def refuse_constant(name):
    raise Refused(f"{name} is not JSON")


class Number(str):
    """A number's literal, kept apart from strings."""


def main():
    if len(sys.argv) != 2:
        print("usage: json-canonical.py DIRECTORY", file=sys.stderr)
        return 2
    directory = sys.argv[1]
    # The writer below takes a few frames per level; the tests nest a few hundred levels.
    sys.setrecursionlimit(5000)
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as file:
            data = file.read()
        print(json.dumps(describe(name, data)))
    return 0


class Object(list):
    """An object's (key, value) pairs in document order."""


def describe(name, data):
    state = {"duplicates": 0, "lone": False, "depth": 0}

    def read_object(pairs):
        # Counted here, as each object is read: also in a value a later repeat replaces.
        state["duplicates"] += len(pairs) - len({key for key, _ in pairs})
        return Object(pairs)

    try:
        text = data.decode("utf-8")
        value = json.loads(text, object_pairs_hook=read_object, parse_int=Number, parse_float=Number,
                           parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return {"file": name, "ok": False, "error": f"{type(error).__name__}: {error}"}
    scan(value, 0, state)
    canonical = write(value)
    return {"file": name, "ok": True, "canonical": canonical, "duplicates": state["duplicates"],
            "depth": state["depth"], "loneSurrogate": state["lone"]}


def scan(value, depth, state):
    """Depth and lone surrogates over everything read, also values a repeated key replaced."""
    if isinstance(value, Object):
        state["depth"] = max(state["depth"], depth + 1)
        for key, member in value:
            scan(key, depth + 1, state)
            scan(member, depth + 1, state)
    elif isinstance(value, list):
        state["depth"] = max(state["depth"], depth + 1)
        for element in value:
            scan(element, depth + 1, state)
    elif isinstance(value, str) and not isinstance(value, Number):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            state["lone"] = True


def write(value):
    if isinstance(value, Number):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, Object):
        members = dict(value)
        return "{" + ",".join(write(key) + ":" + write(member) for key, member in members.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write(element) for element in value) + "]"
    return json.dumps(value)


if __name__ == "__main__":
    sys.exit(main())
