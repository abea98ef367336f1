#!/usr/bin/env python3
"""Reads one object back with boto3: the independent client of PushPrep's storage tests.

Reads one JSON object on standard input:
    {"endpoint": "http://127.0.0.1:PORT", "region": "us-east-1", "access_key_id": "…",
     "secret_access_key": "…", "bucket": "NAME", "key": "KEY"}
and prints what S3 stores for the key (a GetObject): the body in base64, its length, the
Content-Type, Cache-Control, Content-Disposition and Content-Encoding headers (null when absent)
and the user metadata (the x-amz-meta-* headers, names without the prefix, as boto3 gives them).
A missing object prints {"error": "NoSuchKey"} (or the server's other error code) and exits 0,
so a test can tell "not there" from "the script failed".
"""

import base64
import json
import sys

from botocore.exceptions import ClientError

from moto_setup import client


def main():
    request = json.load(sys.stdin)
    s3 = client("s3", request, request["access_key_id"], request["secret_access_key"])
    try:
        response = s3.get_object(Bucket=request["bucket"], Key=request["key"])
    except ClientError as error:
        json.dump({"error": error.response.get("Error", {}).get("Code", "unknown")}, sys.stdout)
        return
    body = response["Body"].read()
    json.dump(
        {
            "body_base64": base64.b64encode(body).decode("ascii"),
            "content_length": response.get("ContentLength"),
            "content_type": response.get("ContentType"),
            "cache_control": response.get("CacheControl"),
            "content_disposition": response.get("ContentDisposition"),
            "content_encoding": response.get("ContentEncoding"),
            "metadata": response.get("Metadata", {}),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
