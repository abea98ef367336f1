#!/usr/bin/env python3
"""Lists a bucket's keys under a prefix with boto3, and its unfinished multipart uploads: what
a test checks after workers were killed mid-upload (no stray object, no parts left billed).

Reads one JSON object on standard input:
    {"endpoint": "http://127.0.0.1:PORT", "region": "us-east-1", "access_key_id": "…",
     "secret_access_key": "…", "bucket": "NAME", "prefix": "PREFIX/"}
and prints {"keys": [...], "uploads": [...]} (every page of ListObjectsV2, and the keys of
ListMultipartUploads).
"""

import json
import sys

from moto_setup import client


def main():
    request = json.load(sys.stdin)
    s3 = client("s3", request, request["access_key_id"], request["secret_access_key"])
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=request["bucket"], Prefix=request["prefix"]):
        keys += [item["Key"] for item in page.get("Contents", [])]
    uploads = s3.list_multipart_uploads(Bucket=request["bucket"], Prefix=request["prefix"]).get("Uploads", [])
    json.dump({"keys": keys, "uploads": [upload["Key"] for upload in uploads]}, sys.stdout)


if __name__ == "__main__":
    main()
