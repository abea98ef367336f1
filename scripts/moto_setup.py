#!/usr/bin/env python3
"""Prepares a moto S3 server for PushPrep's storage tests (Tests/PushPrepTestSupport/MotoS3Server.swift).

Reads one JSON object on standard input and prints one on standard output.

With "iam": true (the server runs with INITIAL_NO_AUTH_ACTION_COUNT=3, so it checks signatures
and IAM policies from the fourth request on), the first three requests create an IAM user, give it
a policy allowing every S3 action and make it an access key; everything after is signed with that
key, so a wrong signature is a 403 as on AWS. With "iam": false (a server without IAM auth), the
fixed test key is used and nothing is checked.

Then, in both cases, the bucket "bucket" is created (when given). Prints the endpoint, region,
access key id, secret and bucket. Input:
    {"endpoint": "http://127.0.0.1:PORT", "region": "us-east-1", "iam": true, "bucket": "NAME"}
To create another bucket with keys made earlier, add "access_key_id" and "secret_access_key"
(and "iam": false, since the user exists already).

Uses boto3 with explicit settings only: the AWS_* variables and ~/.aws files of whoever runs the
tests are ignored, so a developer's profile cannot change what the tests do.
"""

import json
import os
import sys

# Before boto3 reads them: a developer's AWS_PROFILE, AWS_ENDPOINT_URL or config file must not
# redirect or break the test clients.
for name in [name for name in os.environ if name.startswith("AWS_")]:
    del os.environ[name]
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

# The key moto accepts when it does not check signatures (any key would do).
UNCHECKED_KEY = ("testing", "testing")
# What the IAM user may do: everything in S3, nothing else.
S3_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
}


def client(service, request, key_id, secret):
    return boto3.client(
        service,
        endpoint_url=request["endpoint"],
        region_name=request["region"],
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )


def main():
    request = json.load(sys.stdin)
    key_id = request.get("access_key_id", UNCHECKED_KEY[0])
    secret = request.get("secret_access_key", UNCHECKED_KEY[1])
    if request.get("iam"):
        # Exactly three requests: the server's INITIAL_NO_AUTH_ACTION_COUNT.
        iam = client("iam", request, *UNCHECKED_KEY)
        iam.create_user(UserName="pushprep-tests")
        iam.put_user_policy(UserName="pushprep-tests", PolicyName="s3", PolicyDocument=json.dumps(S3_POLICY))
        key = iam.create_access_key(UserName="pushprep-tests")["AccessKey"]
        key_id, secret = key["AccessKeyId"], key["SecretAccessKey"]
    bucket = request.get("bucket")
    if bucket:
        s3 = client("s3", request, key_id, secret)
        arguments = {"Bucket": bucket}
        if request["region"] != "us-east-1":
            arguments["CreateBucketConfiguration"] = {"LocationConstraint": request["region"]}
        s3.create_bucket(**arguments)
    json.dump(
        {
            "endpoint": request["endpoint"],
            "region": request["region"],
            "access_key_id": key_id,
            "secret_access_key": secret,
            "bucket": bucket,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
