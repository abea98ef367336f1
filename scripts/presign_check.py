#!/usr/bin/env python3
"""Recomputes a presigned S3 URL's signature with botocore: the independent check of the URLs
PushPrep writes into a manifest (`process --store s3://… --presign`).

Reads one JSON object on standard input:
    {"url": "http://…?X-Amz-Algorithm=…&X-Amz-Signature=…", "access_key_id": "…",
     "secret_access_key": "…", "region": "us-east-1"}
takes the URL's X-Amz-Date and X-Amz-Expires, signs the same URL without its authentication
parameters with botocore's S3SigV4QueryAuth at that time, and prints
    {"given": "<the URL's signature>", "botocore": "<botocore's>", "match": true|false,
     "expired": true|false}
where "expired" says whether now (this machine's clock, UTC) is at or past X-Amz-Date plus
X-Amz-Expires, the moment S3 starts refusing the URL. Exits 0 whenever it could compute a
signature, so the test decides what a mismatch or an expiry means.
"""

import datetime
import json
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit, quote

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AUTH = {
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
    "X-Amz-Security-Token", "X-Amz-Signature",
}


def main():
    request = json.load(sys.stdin)
    parts = urlsplit(request["url"])
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    given = dict(pairs)
    others = [(name, value) for name, value in pairs if name not in AUTH]
    unsigned = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(others, quote_via=quote), ""))
    signed_at = datetime.datetime.strptime(given["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *args, **kwargs: signed_at
    credentials = Credentials(request["access_key_id"], request["secret_access_key"])
    auth = botocore.auth.S3SigV4QueryAuth(
        credentials, "s3", request["region"], expires=int(given["X-Amz-Expires"]))
    aws_request = AWSRequest(method="GET", url=unsigned)
    auth.add_auth(aws_request)
    computed = dict(parse_qsl(urlsplit(aws_request.url).query))["X-Amz-Signature"]
    ends = signed_at + datetime.timedelta(seconds=int(given["X-Amz-Expires"]))
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    json.dump(
        {"given": given.get("X-Amz-Signature"), "botocore": computed,
         "match": computed == given.get("X-Amz-Signature"), "expired": now >= ends},
        sys.stdout)


if __name__ == "__main__":
    main()
