#!/usr/bin/env python3
"""Copies the manifest's schemas ($defs of schema/manifest.schema.json) into the OpenAPI
document as components.schemas["Manifest.NAME"], their $refs rewritten, so that the two stay
the same (OpenAPIContractTests.manifestSchemasAreTheManifestsOwn checks it). Run it after
changing schema/manifest.schema.json:  python3 scripts/sync-openapi-manifest.py
"""
import collections
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
schema_path = root / "schema/manifest.schema.json"
openapi_path = root / "Sources/PushPrepServer/openapi.json"

definitions = json.loads(schema_path.read_text(), object_pairs_hook=collections.OrderedDict)["$defs"]
document = json.loads(openapi_path.read_text(), object_pairs_hook=collections.OrderedDict)
schemas = document["components"]["schemas"]
for name, definition in definitions.items():
    text = json.dumps(definition).replace('"#/$defs/', '"#/components/schemas/Manifest.')
    schemas["Manifest." + name] = json.loads(text, object_pairs_hook=collections.OrderedDict)
openapi_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
print(f"{len(definitions)} manifest schemas copied into {openapi_path.relative_to(root)}")
