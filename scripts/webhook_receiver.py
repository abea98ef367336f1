#!/usr/bin/env python3
"""A webhook receiver for the tests: it checks each request's Standard Webhooks signature on its
own (the standard library's hmac, hashlib and base64, nothing of PushPrep's) and records what it got.

    webhook_receiver.py RECORD_FILE --secret SECRET [--fail-first K] [--status S] [--delay SECONDS]
        [--host ADDRESS] [--trickle BYTES --trickle-interval SECONDS]

Listens on a free port of ADDRESS (127.0.0.1 unless given: 127.0.0.2, ::1, ...) and prints
`listening PORT` once bound. Every accepted connection appends {"kind": "connection"} to
RECORD_FILE; every request appends one JSON line:

    {"kind": "request", "method", "path", "id", "timestamp", "signature", "content_type",
     "user_agent", "body" (the body as text), "verified": true|false, "status": answered}

`verified` is true when one of the space-separated `v1,` signatures is the base64 HMAC-SHA256,
under SECRET (`whsec_` and base64, or base64), of "{webhook-id}.{webhook-timestamp}.{body}".
The answer is 500 for the first K requests, then S (default 200); with --delay the answer
waits that long first. With --trickle the answer's head announces a body of BYTES bytes, which
then follow one at a time, one every --trickle-interval seconds (a receiver that answers at once
and holds the connection); once the body is sent or the client has gone, one more line says how
far it got: {"kind": "response", "id", "sent": bytes written, "complete": true|false}.
Runs until killed.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import socket
import sys
import threading
import time

lock = threading.Lock()
state = {"requests": 0}


def decode_secret(text):
    if text.startswith("whsec_"):
        text = text[len("whsec_"):]
    return base64.b64decode(text, validate=True)


def verify(key, msg_id, timestamp, body, header):
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in header.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


def record(path, entry):
    with lock:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("record")
    parser.add_argument("--secret", required=True)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--trickle", type=int, default=0)
    parser.add_argument("--trickle-interval", type=float, default=1)
    options = parser.parse_args()
    key = decode_secret(options.secret)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            msg_id = self.headers.get("webhook-id", "")
            timestamp = self.headers.get("webhook-timestamp", "")
            signature = self.headers.get("webhook-signature", "")
            with lock:
                state["requests"] += 1
                number = state["requests"]
            status = 500 if number <= options.fail_first else options.status
            record(options.record, {
                "kind": "request",
                "method": self.command,
                "path": self.path,
                "id": msg_id,
                "timestamp": timestamp,
                "signature": signature,
                "content_type": self.headers.get("Content-Type", ""),
                "user_agent": self.headers.get("User-Agent", ""),
                "body": body.decode("utf-8", errors="replace"),
                "verified": verify(key, msg_id, timestamp, body, signature),
                "status": status,
            })
            if options.delay:
                time.sleep(options.delay)
            if options.trickle:
                self.trickle(status, msg_id)
                return
            answer = b"ok\n" if status < 300 else b"no\n"
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def trickle(self, status, msg_id):
            sent = 0
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(options.trickle))
                self.end_headers()
                self.wfile.flush()
                while sent < options.trickle:
                    time.sleep(options.trickle_interval)
                    self.wfile.write(b".")
                    self.wfile.flush()
                    sent += 1
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            record(options.record, {
                "kind": "response", "id": msg_id, "sent": sent, "complete": sent == options.trickle,
            })

        def log_message(self, format, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in options.host else socket.AF_INET

        def verify_request(self, request, client_address):
            record(options.record, {"kind": "connection"})
            return True

    server = Server((options.host, 0), Handler)
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
