#!/usr/bin/env python3
"""Puts one object with boto3, as a client other than PushPrep would: no x-amz-meta-sha256.

Reads one JSON object on standard input:
    {"endpoint": "http://127.0.0.1:PORT", "region": "us-east-1", "access_key_id": "…",
     "secret_access_key": "…", "bucket": "NAME", "key": "KEY", "body_base64": "…"}
and stores the body under the key (a PutObject with boto3's defaults, its own checksum
algorithm included, and no user metadata). Prints {"etag": "…"}; exits non-zero on failure.
"""

import base64
import json
import sys

from moto_setup import client


def main():
    request = json.load(sys.stdin)
    s3 = client("s3", request, request["access_key_id"], request["secret_access_key"])
    body = base64.b64decode(request["body_base64"])
    response = s3.put_object(Bucket=request["bucket"], Key=request["key"], Body=body)
    json.dump({"etag": response.get("ETag")}, sys.stdout)


if __name__ == "__main__":
    main()
