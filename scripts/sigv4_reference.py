#!/usr/bin/env python3
"""Signs a fixed set of S3 requests with botocore, the reference for PushPrepStorage's SigV4 signer.

Prints one JSON document: the credentials, the signing time and, for each case, the request
(method, URL, headers, payload hash or expiry) with what botocore's S3SigV4Auth (header form) or
S3SigV4QueryAuth (presigned URL) produced: canonical request, string to sign, signature, and the
Authorization header or the presigned URL. The Swift test (SigV4BotocoreTests) signs the same
requests and compares.

URLs are written the way botocore's own serializer writes them (keys quoted with safe "/~",
query names and values with safe "-_.~"): botocore signs a URL's path and query as given, so
only a URL in S3's canonical encoding is a fair comparison. Presigned cases have no repeated
query names and no literal "+" (botocore re-parses the query with parse_qs there, which keeps
one value per name and reads "+" as a space).

Run by `make test` with the interpreter of .build/pyenv (pinned botocore); needs nothing else.
"""

import base64
import datetime
import hashlib
import json
import sys
from urllib.parse import quote

import botocore
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEH4aCXVzLWVhc3QtMSJHMEUCIQD+example/token=="
# A leap day, one second before midnight UTC: the day in the scope and the time must agree.
SIGNING_TIME = datetime.datetime(2024, 2, 29, 23, 59, 59)
EPOCH_SECONDS = int(SIGNING_TIME.replace(tzinfo=datetime.timezone.utc).timestamp())


class _Client:
    """The slice of a client config botocore's S3 signer reads: payload signing on or off."""

    def __init__(self, sign_payload):
        self.s3 = {"payload_signing_enabled": sign_payload}


def key_url(base, key, query=""):
    url = base + "/" + quote(key, safe="/~")
    return url + ("?" + query if query else "")


def query(*pairs):
    return "&".join(
        quote(name, safe="-_.~") + ("" if value is None else "=" + quote(value, safe="-_.~"))
        for name, value in pairs
    )


def capture(auth):
    """Records the canonical request and string to sign botocore computes while signing."""
    seen = {}
    canonical_request, string_to_sign = auth.canonical_request, auth.string_to_sign

    def record_canonical(request):
        seen["canonical_request"] = canonical_request(request)
        return seen["canonical_request"]

    def record_string_to_sign(request, canonical):
        seen["string_to_sign"] = string_to_sign(request, canonical)
        return seen["string_to_sign"]

    auth.canonical_request = record_canonical
    auth.string_to_sign = record_string_to_sign
    return seen


def header_case(name, method, url, headers=(), body=b"", token=False, region="us-east-1", unsigned=False):
    credentials = Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN if token else None)
    auth = botocore.auth.S3SigV4Auth(credentials, "s3", region)
    seen = capture(auth)
    request = AWSRequest(method=method, url=url, data=body)
    for header, value in headers:
        request.headers[header] = value  # appends: a repeated name is sent (and signed) twice
    if unsigned:
        request.context["client_config"] = _Client(False)
    auth.add_auth(request)
    payload_hash = "UNSIGNED-PAYLOAD" if unsigned else hashlib.sha256(body).hexdigest()
    assert request.headers["X-Amz-Content-SHA256"] == payload_hash, name
    return {
        "name": name,
        "form": "header",
        "method": method,
        "url": url,
        "region": region,
        "token": token,
        "headers": [[header, value] for header, value in headers],
        "payload_hash": payload_hash,
        "canonical_request": seen["canonical_request"],
        "string_to_sign": seen["string_to_sign"],
        "authorization": request.headers["Authorization"],
        "x_amz_date": request.headers["X-Amz-Date"],
        "security_token": request.headers.get("X-Amz-Security-Token"),
    }


def presign_case(name, method, url, expires, token=False, region="us-east-1"):
    credentials = Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN if token else None)
    auth = botocore.auth.S3SigV4QueryAuth(credentials, "s3", region, expires=expires)
    seen = capture(auth)
    request = AWSRequest(method=method, url=url)
    auth.add_auth(request)
    return {
        "name": name,
        "form": "presign",
        "method": method,
        "url": url,
        "region": region,
        "token": token,
        "expires": expires,
        "canonical_request": seen["canonical_request"],
        "string_to_sign": seen["string_to_sign"],
        "presigned_url": request.url,
    }


def main():
    botocore.auth.get_current_datetime = lambda *args, **kwargs: SIGNING_TIME
    virtual = "https://examplebucket.s3.amazonaws.com"
    path_style = "https://s3.eu-west-3.amazonaws.com/example-bucket"
    odd = "photos/summer 2024/a+b~c$d!e*f'g(h)i,j;k=l@m:n&o%p#q[r]s.jpg"
    unicode_key = "café/naïve – 日本語/Ünïcödé ✓.png"
    cases = [
        header_case("key with spaces and reserved characters", "GET", key_url(virtual, odd)),
        header_case(
            "unicode key, PUT with a body and a content type", "PUT", key_url(virtual, unicode_key),
            headers=[("Content-Type", "image/png"), ("Cache-Control", "public, max-age=31536000, immutable")],
            body="Welcome to PushPrep ✓".encode()),
        header_case(
            "query with empty values, repeated names, and a name without a value", "GET",
            virtual + "/?" + query(("prefix", "a b"), ("prefix", "a"), ("list-type", "2"), ("delimiter", "/"),
                                   ("marker", ""), ("Z-Upper", "1"), ("encoding-type", "url"), ("acl", None))),
        header_case(
            "session token and headers with inner spaces, tabs and a repeated name", "GET",
            key_url(virtual, "object.bin"), token=True,
            headers=[("Range", "  bytes=0-9  "), ("X-Amz-Meta-Note", "hello \t   world"),
                     ("x-amz-meta-note", "second"), ("X-Amz-Meta-Empty", "")]),
        header_case(
            "path-style URL on a non-default port over http", "PUT",
            key_url("http://127.0.0.1:9000/bucket", "uploads/1 2+3.mp4"), body=b"\x00\x01binary\xff"),
        header_case(
            "path-style URL in another region, with an explicit default port", "DELETE",
            key_url("https://s3.eu-west-3.amazonaws.com:443/example-bucket", "a/b/c.txt", query(("versionId", "3/L4kqtJl+"))),
            region="eu-west-3"),
        header_case(
            "unsigned payload over https with a non-default port", "PUT",
            key_url("https://minio.example.com:8443/bucket", "big file.mov"), unsigned=True),
        header_case(
            "multipart upload part, uploadId before partNumber in the URL", "PUT",
            key_url(path_style, "video/clip.mp4", query(("uploadId", "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5t.dHM-"), ("partNumber", "7"))),
            region="eu-west-3", body=b"x" * 1000),
        # Issue 26 §1.9: the checksum headers of a multipart upload are signed like any other.
        header_case(
            "CreateMultipartUpload with x-amz-checksum-algorithm and the object's metadata", "POST",
            key_url(path_style, "video/clip.mp4", "uploads="), region="eu-west-3",
            headers=[("Content-Type", "video/mp4"), ("Cache-Control", "public, max-age=31536000, immutable"),
                     ("x-amz-meta-sha256", "a" * 64), ("x-amz-checksum-algorithm", "SHA256")]),
        header_case(
            "UploadPart with its x-amz-checksum-sha256", "PUT",
            key_url(path_style, "video/clip.mp4", query(("partNumber", "2"), ("uploadId", "VXBsb2FkIElE~/+="))),
            region="eu-west-3", headers=[("x-amz-checksum-sha256", base64.b64encode(hashlib.sha256(b"y" * 1000).digest()).decode())],
            body=b"y" * 1000, token=True),
        header_case(
            "HEAD with x-amz-checksum-mode", "HEAD", key_url(path_style, "push/photo.jpg"), region="eu-west-3",
            headers=[("x-amz-checksum-mode", "ENABLED")]),
        presign_case("presigned GET with an odd key", "GET", key_url(virtual, odd), 86400),
        presign_case("presigned GET of a unicode key with a session token", "GET", key_url(virtual, unicode_key), 604800, token=True),
        presign_case(
            "presigned GET with response overrides on a non-default port", "GET",
            key_url("http://127.0.0.1:9000/bucket", "a b.jpg",
                    query(("response-content-disposition", 'attachment; filename="a b.jpg"'), ("versionId", ""),
                          ("response-cache-control", "max-age=60"))),
            3600),
        presign_case("presigned PUT, path-style, another region", "PUT", key_url(path_style, "out/x~y_z.heic"), 1, region="eu-west-3"),
    ]
    json.dump(
        {
            "botocore": botocore.__version__,
            "access_key": ACCESS_KEY,
            "secret_key": SECRET_KEY,
            "session_token": SESSION_TOKEN,
            "epoch_seconds": EPOCH_SECONDS,
            "cases": cases,
        },
        sys.stdout,
        indent=1,
        ensure_ascii=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
