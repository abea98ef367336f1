#!/usr/bin/python3
"""Checks one JSON document (standard input) against a JSON Schema, draft 2020-12.

Usage: check-json-schema.py SCHEMA.json < DOCUMENT.json

The tests validate every manifest they produce through this, with Python's jsonschema
(Debian's python3-jsonschema, which `make deps` installs). Prints one JSON object per
violation, {"pointer", "keyword", "message"}, the pointer in URI-fragment form ("#" is the
document root); the branches of a failed oneOf/anyOf follow their parent. Exits 0 when the
document was checked (valid or not), 2 when the schema or the document cannot be read.
"""

import json
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError


def pointer(path):
    return "#" + "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def with_branches(error):
    yield error
    for branch in error.context or ():
        yield from with_branches(branch)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8") as file:
            schema = json.load(file)
        Draft202012Validator.check_schema(schema)
        document = json.load(sys.stdin)
    except (OSError, ValueError, SchemaError) as error:
        print(f"check-json-schema: {error}", file=sys.stderr)
        return 2
    validator = Draft202012Validator(schema)
    for error in validator.iter_errors(document):
        for found in with_branches(error):
            # A false schema ("this property is not allowed here") has no keyword: call it "false".
            keyword = found.validator if found.validator is not None else "false"
            print(json.dumps({"pointer": pointer(found.absolute_path), "keyword": keyword,
                              "message": found.message}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
