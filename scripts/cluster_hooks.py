#!/usr/bin/env python3
"""The `hooks` host of `make test-cluster` (scripts/cluster.py): a webhook receiver that checks
each delivery's Standard Webhooks signature and records it.

    cluster_hooks.py HOST PORT SECRET_FILE LOG_FILE

Listens on HOST:PORT; every POST's `webhook-signature` (`v1,<base64 HMAC-SHA256 of
"{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the base64 after `whsec_` of the secret
file's first line) is checked. A delivery is appended to LOG_FILE as one JSON line: `id` (its
webhook-id), `valid`, and from its body `type`, `job` (data.id) and `state` (data.state). A valid
one is answered 204, an invalid one 401 (so the sender retries it and the harness sees both).
Prints `listening` once bound.
"""

import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    host, port, secret_file, log_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(secret_file) as f:
        key = base64.b64decode(f.readline().strip().removeprefix("whsec_"))
    log = open(log_file, "a", buffering=1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            webhook_id = self.headers.get("webhook-id", "")
            signed = f"{webhook_id}.{self.headers.get('webhook-timestamp', '')}.".encode() + body
            expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
            offered = [s.partition(",")[2] for s in self.headers.get("webhook-signature", "").split()]
            valid = any(hmac.compare_digest(expected, s) for s in offered)
            record = {"id": webhook_id, "valid": valid, "at": time.time()}
            try:
                event = json.loads(body)
                record.update(type=event.get("type"), job=event["data"]["id"], state=event["data"]["state"])
            except (ValueError, KeyError, TypeError):
                record["valid"] = False
            with lock:
                log.write(json.dumps(record) + "\n")
            self.send_response(204 if record["valid"] else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    print("listening", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
