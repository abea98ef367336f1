#!/usr/bin/env python3
"""`make test-cluster`: PushPrep's queue guarantees across real network boundaries, on one machine.

Root only. Builds hosts as network namespaces joined by veth pairs to a bridge, on 10.77.0.0/24
(scripts/cluster_net.py; nothing is added to the machine's own namespace):

    db     10.77.0.2   PostgreSQL (Debian's, initdb in the run's directory; pg_stat_statements)
    store  10.77.0.3   moto's S3 server, behind an endpoint process (scripts/s3_hold_proxy.py --pass-all)
    api    10.77.0.4   pushprep serve --workers 0
    hooks  10.77.0.5   a webhook receiver checking signatures (scripts/cluster_hooks.py)
    media  10.77.0.6   the sources' web server (python -m http.server)
    w1..w3 10.77.0.11-13  pushprep worker --store s3://... --concurrency 2
    ctl    10.77.0.100 this harness: it submits, probes and checks from here

The API and worker hosts also have PID and UTS namespaces of their own (their own host names and
process lists), so no worker can see another host's processes. The workers read uploads from
the API host's --uploads directory, a shared volume (the machine's file system), as NFS would be.

The workload: JOBS jobs (default 2000) of real small media: the samples/ files and generated
photos and graphics (distinct, so each job has its own objects), a quarter uploaded
(POST /v1/uploads) and the rest by URL from the media host (POST /v1/jobs, ten sources a
request), all with a callback URL on the hooks host. Submission is paced (at most 200 jobs
waiting) so that it goes on during the fault; every request is retried after a 503 or a lost
connection with its Idempotency-Key.

Faults, one per run, once a quarter of the jobs have ended (so that work is left after the
fault for the host to rejoin) and the target holds leases:
    partition     w1's link down for 30 s (ip link set ... down), then up
    kill          SIGKILL every process on w1; the host comes back 20 s later
    db-restart    pg_ctl restart -m immediate (down for a few seconds: requests wait for it)
    db-outage     pg_ctl stop -m immediate, 20 s down, pg_ctl start: the API must answer 503
    store-outage  the S3 endpoint down for 20 s (its process killed: refused connections)
    slow-link     w3's link through a relay adding 200 ms and 1% loss to what it sends, all run

After each run it checks: every accepted job succeeded or failed with a permanent code, none
left queued or running; each succeeded job's objects are in the bucket exactly once with the
manifest's SHA-256, and no object is anyone else's; unfinished multipart uploads only of jobs the
faulted host held (listed); each job's webhook reached the receiver, signed, all deliveries of a
job under one webhook-id; `pushprep jobs list` agrees with the bucket and the receiver; the API
answered only 2xx, 429 or 503 (with Retry-After and queue_unavailable/storage_unavailable), and
within 15 s, while probed every 250 ms through the fault.

It prints one table per run: jobs per second, rescue latency (the longest a job the faulted host
held waited, from the fault, for its next attempt), fenced late finishes (results the queue
refused, results dropped after a lost lease, publications withheld), duplicate deliveries,
and time to recover (partition and kill: from the link or host back to the host's first
finished job; the others: from the fault's end to the first job that began after it and
succeeded).

    scripts/cluster.py [--faults partition,kill,db-restart,db-outage,store-outage,slow-link] [--jobs 2000]
                       [--binary .build/release/pushprep] [--keep]

Each fault runs in a child process of its own (a fresh network, database and bucket). Exit 1 when
a check fails. Run directories: /tmp/pushprep-cluster/<pid>-<fault>/ (logs of every host), removed
after a passing run unless --keep; the namespaces, links and processes are removed always.
"""

import argparse
import base64
import hashlib
import json
import os
import pwd
import random
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_net  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAULTS = ("partition", "kill", "db-restart", "db-outage", "store-outage", "slow-link")
SUBNET = "10.77.0"
ADDRESS = {"db": 2, "store": 3, "api": 4, "hooks": 5, "media": 6, "ctl": 100}
WORKERS = {"w1": 11, "w2": 12, "w3": 13}
DB_URL = f"postgres://postgres@{SUBNET}.2:5432/pushprep?sslmode=disable"
S3_ENDPOINT = f"http://{SUBNET}.3:9000"
BUCKET = "cluster"
STORE_URL = f"s3://{BUCKET}/push?region=us-east-1&endpoint={S3_ENDPOINT}"
API = f"http://{SUBNET}.4:8080"
HOOK_URL = f"http://{SUBNET}.5:8000/hook"
MEDIA = f"http://{SUBNET}.6:8000"
AWS_KEY = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# Codes a job may end with and still pass: failures no retry could mend.
PERMANENT = {"unsupported_type", "corrupt_input", "too_many_pixels", "cannot_fit", "resource_exhausted"}
# What the workers run with: a short lease, so a cut-off host's jobs are rescued within the run.
WORKER_TUNING = ["--concurrency", "2", "--lease", "10", "--retry-base", "1", "--retry-max", "5",
                 "--poll-interval", "0.5", "--drain-timeout", "30", "--multipart-threshold", "65536"]  # fmt: skip
BACKLOG = 200
PARTITION_SECONDS = 30
DOWN_SECONDS = 20
SLOW = (0.2, 0.01)


class CheckFailed(Exception):
    pass


def log(message):
    print(f"cluster: {message}", file=sys.stderr, flush=True)


def pg_bin():
    root = "/usr/lib/postgresql"
    versions = sorted(os.listdir(root), key=lambda v: float(v) if v.replace(".", "").isdigit() else 0)
    return os.path.join(root, versions[-1], "bin")


def boto3_client():
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        del os.environ[name]
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", endpoint_url=S3_ENDPOINT, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}, max_pool_connections=16),
    )  # fmt: skip


# MARK: - The workload


def make_corpus(directory, count):
    """`count` distinct small images (JPEG photos-like, PNG graphics with alpha, a few GIFs)."""
    from PIL import Image, ImageDraw

    os.makedirs(directory, exist_ok=True)
    rng = random.Random(31)
    names = []
    for i in range(count):
        kind = ("jpg", "jpg", "jpg", "png", "gif")[i % 5]
        width, height = rng.choice([(640, 480), (960, 640), (1280, 720), (800, 800), (1600, 1066)])
        if kind == "gif":
            width, height = width // 3, height // 3
        mode = "RGBA" if kind == "png" else "RGB"
        image = Image.new(mode, (width, height), (rng.randrange(256), rng.randrange(256), rng.randrange(256), 255))
        draw = ImageDraw.Draw(image)
        for _ in range(12):
            box = sorted(rng.sample(range(width), 2)), sorted(rng.sample(range(height), 2))
            colour = tuple(rng.randrange(256) for _ in range(3)) + (rng.randrange(96, 256),)
            draw.ellipse((box[0][0], box[1][0], box[0][1], box[1][1]), fill=colour)
        draw.text((10, 10), f"cluster {i}", fill=(255, 255, 255, 255))
        name = f"m{i:05d}.{kind}"
        path = os.path.join(directory, name)
        if kind == "jpg":
            image.save(path, quality=88)
        else:
            image.save(path)
        names.append(name)
    return names


# MARK: - One run


class Run:
    def __init__(self, args, fault):
        self.args = args
        self.fault = fault
        self.work = os.path.join("/tmp/pushprep-cluster", f"{os.getpid()}-{fault}")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        for path in ("/tmp/pushprep-cluster", self.work):
            os.chmod(path, 0o755)
        self.binary = os.path.abspath(args.binary)
        self.python = sys.executable
        self.pg = pg_bin()
        self.processes = {}  # name -> Popen
        self.logs = {}
        self.accepted = set()  # job ids the API answered with
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.fault_window = None  # (start, end) epoch seconds
        self.probes = []  # (epoch, status, code, retry_after, seconds)
        self.api_key = secrets.token_hex(16)

    # MARK: Hosts

    def build_network(self):
        self.net = cluster_net.Network(SUBNET)
        self.hosts = {}
        for name, index in ADDRESS.items():
            self.hosts[name] = self.net.add_host(name, index)
        for name, index in WORKERS.items():
            slow = SLOW if self.fault == "slow-link" and name == "w3" else None
            self.hosts[name] = self.net.add_host(name, index, slow=slow)
        # From here on this process (and what it starts) lives on the ctl host.
        self.net.enter(self.hosts["ctl"])

    def spawn(self, host, name, args, own_pids=False, env=None):
        path = os.path.join(self.work, f"{name}.log")
        output = open(path, "ab")
        self.logs[name] = path
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        environment.update(env or {})
        process = self.hosts[host].spawn(
            args, own_pids=own_pids, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=environment)
        output.close()
        self.processes[name] = process
        return process

    def alive(self, name):
        """True while `name` runs; raises with the end of its log once it has exited."""
        if self.processes[name].poll() is None:
            return True
        with open(self.logs[name], errors="replace") as f:
            tail = f.read()[-1500:]
        raise CheckFailed(f"{name} exited with status {self.processes[name].returncode}: {tail}")

    def psql(self, sql, database="pushprep", user="harness"):
        """Runs `sql` as the harness's own role (PushPrep's processes connect as postgres), so that
        its polling stays out of the statistics of PushPrep's load."""
        result = subprocess.run(
            [os.path.join(self.pg, "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", f"{SUBNET}.2",
             "-U", user, "-d", database, "-c", sql],
            capture_output=True, text=True, timeout=60)  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"psql: {result.stderr.strip()}")
        return result.stdout.strip()

    def pg_ctl(self, *args):
        data = os.path.join(self.work, "db", "data")
        command = ["runuser", "-u", "postgres", "--", os.path.join(self.pg, "pg_ctl"), "-D", data,
                   "-l", os.path.join(self.work, "db", "server.log"), "-w", "-t", "60", *args]  # fmt: skip
        cluster_net.run(*self.hosts["db"].command(command))

    def start_db(self):
        directory = os.path.join(self.work, "db")
        os.makedirs(directory)
        user = pwd.getpwnam("postgres")
        os.chown(directory, user.pw_uid, user.pw_gid)
        data = os.path.join(directory, "data")
        cluster_net.run("runuser", "-u", "postgres", "--", os.path.join(self.pg, "initdb"), "-D", data,
                        "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")  # fmt: skip
        with open(os.path.join(data, "postgresql.conf"), "a") as conf:
            conf.write(f"listen_addresses = '{SUBNET}.2'\nunix_socket_directories = '{directory}'\n"
                       "shared_preload_libraries = 'pg_stat_statements'\nmax_connections = 300\n"
                       "pg_stat_statements.track = all\n")  # fmt: skip
        with open(os.path.join(data, "pg_hba.conf"), "a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 trust\n")
        self.pg_ctl("start")
        self.psql("CREATE ROLE harness SUPERUSER LOGIN", database="postgres", user="postgres")
        self.psql("CREATE DATABASE pushprep", database="postgres")
        self.psql("CREATE EXTENSION pg_stat_statements")
        self.psql("SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')")

    def start_store_endpoint(self):
        self.spawn("store", "store-endpoint", [
            self.python, os.path.join(ROOT, "scripts/s3_hold_proxy.py"), "9001", "--listen", f"{SUBNET}.3:9000",
            "--pass-all"])  # fmt: skip

    def start_store(self):
        self.spawn("store", "moto", [self.python, "-m", "moto.server", "-H", "127.0.0.1", "-p", "9001"],
                   env={"PYTHONUNBUFFERED": "1"})  # fmt: skip
        self.start_store_endpoint()
        self.s3 = boto3_client()
        wait_until(lambda: http_status(S3_ENDPOINT + "/") is not None, 60, "the S3 server to answer")
        self.s3.create_bucket(Bucket=BUCKET)

    def start_api(self):
        secret_file = os.path.join(self.work, "webhook.secret")
        with open(secret_file, "w") as f:
            f.write("whsec_" + base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
        self.secret_file = secret_file
        keys = os.path.join(self.work, "api.keys")
        with open(keys, "w") as f:
            f.write(f"{self.api_key} read,write\n")
        self.uploads = os.path.join(self.work, "uploads")
        os.makedirs(self.uploads)
        self.spawn("api", "api", [
            self.binary, "serve", "--workers", "0", "--host", f"{SUBNET}.4", "--port", "8080", "--queue", DB_URL,
            "--store", STORE_URL, "--api-keys-file", keys, "--webhook-secret-file", secret_file,
            "--allow-private-networks", "--uploads", self.uploads, "--max-queued", "100000"],
            own_pids=True, env=AWS_KEY)  # fmt: skip
        wait_until(lambda: self.alive("api") and http_status(API + "/readyz") == 200, 60, "the API to be ready")

    def start_worker(self, name):
        self.spawn(name, name, [
            self.binary, "worker", "--queue", DB_URL, "--store", STORE_URL, "--source-root", self.uploads,
            "--allow-private-networks", *WORKER_TUNING], own_pids=True, env=AWS_KEY)  # fmt: skip

    def start_edges(self, corpus):
        self.hooks_log = os.path.join(self.work, "hooks.jsonl")
        self.spawn("hooks", "hooks", [self.python, os.path.join(ROOT, "scripts/cluster_hooks.py"), f"{SUBNET}.5",
                                      "8000", self.secret_file, self.hooks_log])  # fmt: skip
        self.spawn("media", "media", [self.python, "-m", "http.server", "--bind", f"{SUBNET}.6", "8000",
                                      "--directory", corpus])  # fmt: skip
        wait_until(lambda: http_status(MEDIA + "/") == 200, 30, "the media host to answer")
        wait_until(lambda: http_status(HOOK_URL) is not None, 30, "the hooks host to answer")

    def watch_sockets(self, name):
        """Records the host's TCP connections every 5 s after its fault (in its log directory)."""
        with open(os.path.join(self.work, f"{name}-sockets.log"), "a") as f:
            while not self.stop.is_set():
                f.write(f"--- {time.time():.1f}\n" + cluster_net.run(*self.hosts[name].command(["ss", "-tnoi"]),
                                                                     check=False))  # fmt: skip
                f.flush()
                self.stop.wait(5)

    def kill_host(self, name):
        """SIGKILL every process on a host (what `ip netns pids` lists)."""
        cluster_net.kill_processes(self.hosts[name].namespace)
        self.processes[name].wait()

    # MARK: Requests

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers, JSON or None), retried on a lost connection with the same request."""
        request = urllib.request.Request(API + path, data=body, method=method)
        request.add_header("Authorization", f"Bearer {self.api_key}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, answer.headers, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            data = error.read()
            try:
                document = json.loads(data)
            except ValueError:
                document = None
            return error.code, error.headers, document

    def submit(self, method, path, body, headers, count):
        """Sends one submission until it is accepted (2xx), waiting on 429, 503 and lost connections."""
        delay = 0.5
        while True:
            try:
                status, answer_headers, document = self.request(method, path, body, headers)
            except (OSError, urllib.error.URLError) as error:
                status, answer_headers, document = None, {}, {"error": str(error)}
            if status in (200, 201, 202):
                ids = [job["id"] for job in document["jobs"]] if "jobs" in document else [document["id"]]
                with self.lock:
                    self.accepted.update(ids)
                return
            if status not in (None, 429, 503):
                raise CheckFailed(f"{method} {path} answered {status}: {document}")
            retry_after = answer_headers.get("Retry-After") if answer_headers else None
            time.sleep(min(float(retry_after), 5) if retry_after else delay)
            delay = min(delay * 2, 5)

    def submissions(self, corpus, names, samples):
        """The workload's requests: (method, path, body, headers, job count)."""
        requests = []
        uploads = [os.path.join(samples, n) for n in sorted(os.listdir(samples))]
        by_upload = max(0, (len(names) + len(uploads)) // 4 - len(uploads))
        uploads += [os.path.join(corpus, n) for n in names[:by_upload]]
        url_names = names[by_upload:]
        for i, path in enumerate(uploads):
            query = urllib.parse.urlencode({"filename": os.path.basename(path), "callback_url": HOOK_URL})
            with open(path, "rb") as f:
                body = f.read()
            requests.append(("POST", f"/v1/uploads?{query}", body, {"Idempotency-Key": f"up-{i}"}, 1))
        for i in range(0, len(url_names), 10):
            batch = url_names[i : i + 10]
            body = json.dumps({"sources": [f"{MEDIA}/{n}" for n in batch], "callback_url": HOOK_URL}).encode()
            requests.append(("POST", "/v1/jobs", body, {"Idempotency-Key": f"urls-{i}",
                                                        "Content-Type": "application/json"}, len(batch)))  # fmt: skip
        random.Random(7).shuffle(requests)
        return requests

    def ended_jobs(self):
        """Jobs that have ended, from the API's GET /v1/stats (the last count seen while it cannot
        answer). Through the API, not psql: PostgreSQL's load then is PushPrep's own."""
        try:
            status, _, document = self.request("GET", "/v1/stats", timeout=15)
            if status == 200:
                jobs = document["jobs"]
                self.ended = sum(jobs[state] for state in ("succeeded", "failed", "dead", "cancelled"))
        except (OSError, urllib.error.URLError, KeyError, TypeError):
            pass
        return getattr(self, "ended", 0)

    def submit_all(self, requests):
        submitted = 0
        with ThreadPoolExecutor(4) as pool:
            futures = []
            for request in requests:
                while submitted - self.ended_jobs() > BACKLOG and not self.stop.is_set():
                    time.sleep(0.2)
                futures.append(pool.submit(self.submit, *request))
                submitted += request[4]
            for future in futures:
                future.result()

    def probe(self):
        """GET /v1/stats every 250 ms: status, code, Retry-After and time of each answer."""
        while not self.stop.is_set():
            start = time.time()
            try:
                status, headers, document = self.request("GET", "/v1/stats", timeout=15)
                code = document.get("code") if isinstance(document, dict) else None
                retry_after = headers.get("Retry-After")
            except (OSError, urllib.error.URLError) as error:
                status, code, retry_after = None, f"no answer: {error}", None
            self.probes.append((start, status, code, retry_after, time.time() - start))
            self.stop.wait(0.25)

    # MARK: The fault

    def running_on(self, host):
        return int(self.psql(f"SELECT count(*) FROM pushprep_jobs WHERE state = 'running' "
                             f"AND lease_owner LIKE '{host}-%'"))  # fmt: skip

    def inject(self, total):
        """Waits for a quarter of the jobs to end (and, for a host fault, for w1 to hold leases),
        then injects the fault; records its window."""
        wait_until(lambda: self.ended_jobs() >= total // 4, 900, "a quarter of the jobs to end")
        if self.fault in ("partition", "kill"):
            wait_until(lambda: self.running_on("w1") > 0, 60, "w1 to hold a lease")
        start = time.time()
        if self.fault == "partition":
            self.hosts["w1"].cut()
            time.sleep(PARTITION_SECONDS)
            self.hosts["w1"].restore()
            threading.Thread(target=self.watch_sockets, args=("w1",), daemon=True).start()
        elif self.fault == "kill":
            self.kill_host("w1")
            time.sleep(DOWN_SECONDS)
            self.start_worker("w1")
        elif self.fault == "db-restart":
            self.pg_ctl("-m", "immediate", "restart")
        elif self.fault == "db-outage":
            self.pg_ctl("-m", "immediate", "stop")
            time.sleep(DOWN_SECONDS)
            self.pg_ctl("start")
        elif self.fault == "store-outage":
            endpoint = self.processes["store-endpoint"]
            endpoint.kill()
            endpoint.wait()
            time.sleep(DOWN_SECONDS)
            self.start_store_endpoint()
        self.fault_window = (start, time.time())
        log(f"{self.fault}: from {start:.1f} to {self.fault_window[1]:.1f}")

    # MARK: The run

    def execute(self, corpus, names, samples):
        self.build_network()
        self.start_db()
        self.start_store()
        self.start_api()
        self.start_edges(corpus)
        for name in WORKERS:
            self.start_worker(name)
        requests = self.submissions(corpus, names, samples)
        total = sum(r[4] for r in requests)
        db_cpu = postgres_cpu_seconds(self.hosts["db"])
        started = time.time()
        prober = threading.Thread(target=self.probe, daemon=True)
        prober.start()
        injector_error = []

        def injector():
            try:
                if self.fault != "slow-link":
                    self.inject(total)
            except Exception as error:  # noqa: BLE001 (reported by the main thread)
                injector_error.append(error)

        fault_thread = threading.Thread(target=injector, daemon=True)
        fault_thread.start()
        try:
            self.submit_all(requests)
            fault_thread.join()
            if injector_error:
                raise injector_error[0]
            wait_until(lambda: self.unfinished() == 0, 900, "every job to end and its webhook to be delivered")
        finally:
            self.stop.set()
        elapsed = time.time() - started
        self.db_cpu = postgres_cpu_seconds(self.hosts["db"]) - db_cpu
        self.stop_processes()
        return self.check(total, elapsed)

    def unfinished(self):
        return int(self.psql(
            "SELECT (SELECT count(*) FROM pushprep_jobs WHERE state IN ('queued', 'running')) + "
            "(SELECT count(*) FROM pushprep_webhook_deliveries WHERE state = 'pending')"))

    def stop_processes(self):
        """SIGTERM to the workers and the API (they drain), then everything else."""
        for name in list(WORKERS) + ["api"]:
            process = self.processes[name]
            if process.poll() is None:
                # The host's PID 1 is a shell: signal pushprep itself, found through `ip netns pids`
                # (not its decoders, which run the same executable: the parent stops those).
                binary = os.path.realpath(self.binary)
                for pid in cluster_net.namespace_pids(self.hosts[name].namespace):
                    try:
                        parent = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
                        if os.readlink(f"/proc/{pid}/exe") == binary and os.readlink(f"/proc/{parent}/exe") != binary:
                            os.kill(pid, signal.SIGTERM)
                    except (OSError, IndexError):
                        pass  # gone meanwhile
        for name in list(WORKERS) + ["api"]:
            try:
                self.processes[name].wait(timeout=60)
            except subprocess.TimeoutExpired:
                raise CheckFailed(f"{name} did not stop within 60 s of SIGTERM")

    # MARK: Checks

    def check(self, total, elapsed):
        problems = []
        jobs = json.loads(subprocess.run(
            [self.binary, "jobs", "list", "--queue", DB_URL, "--json", "--limit", "100000"],
            capture_output=True, text=True, check=True).stdout)  # fmt: skip
        by_id = {job["id"]: job for job in jobs}
        missing = self.accepted - set(by_id)
        if missing:
            problems.append(f"{len(missing)} accepted jobs are not in `jobs list`: {sorted(missing)[:10]}")
        bad = [j for j in jobs if not (j["state"] == "succeeded" or
               (j["state"] in ("failed", "dead") and (j.get("error") or {}).get("code") in PERMANENT))]  # fmt: skip
        for job in bad[:10]:
            problems.append(f"job {job['id']} ended {job['state']}: {job.get('error')}")
        if len(bad) > 10:
            problems.append(f"... and {len(bad) - 10} more jobs not succeeded or permanently failed")
        succeeded = {j["id"] for j in jobs if j["state"] == "succeeded"}

        # The bucket: every object of every succeeded job, with the manifest's SHA-256, once.
        objects = {}
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            for item in page.get("Contents", []):
                objects[item["Key"]] = item["Size"]
        expected = {}  # key -> (sha256, job)
        for job in jobs:
            if job["state"] != "succeeded":
                continue
            for key, sha in object_files(job["result"]):
                if key in expected and expected[key][0] != sha:
                    problems.append(f"{key}: two jobs name it with different hashes")
                expected[key] = (sha, job["id"])
        absent = [k for k in expected if k not in objects]
        orphans = [k for k in objects if k not in expected]
        problems += [f"job {expected[k][1]}'s object {k} is not in the bucket" for k in absent[:10]]
        problems += [f"object {k} belongs to no succeeded job" for k in orphans[:10]]

        def digest(key):
            return key, hashlib.sha256(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()).hexdigest()

        with ThreadPoolExecutor(8) as pool:
            for key, sha in pool.map(digest, [k for k in expected if k in objects]):
                if expected[key][0] is not None and sha != expected[key][0]:
                    problems.append(f"{key}: SHA-256 {sha}, the manifest says {expected[key][0]}")
        uploads = self.s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
        # Jobs w1 held and did not finish: the partitioned or killed host's.
        held = {int(i) for i in self.psql("SELECT DISTINCT job_id FROM pushprep_job_attempts WHERE worker LIKE "
                                          "'w1-%' AND outcome IS DISTINCT FROM 'succeeded'").split()}  # fmt: skip
        key_jobs = {k: j for k, (_, j) in expected.items()}
        unfinished_uploads = []
        for upload in uploads:
            job = key_jobs.get(upload["Key"])
            unfinished_uploads.append(f"{upload['Key']} (job {job}, begun {upload['Initiated']:%H:%M:%S})")
            if self.fault not in ("partition", "kill") or job not in held:
                problems.append(f"an unfinished multipart upload not of the faulted host: {upload['Key']} (job {job})")

        # The receiver: each ended job's webhook, signed, under one id.
        deliveries = [json.loads(line) for line in open(self.hooks_log) if line.strip()]
        invalid = [d for d in deliveries if not d["valid"]]
        problems += [f"a delivery with a bad signature or body: {d}" for d in invalid[:5]]
        ids_by_job = {}
        for delivery in deliveries:
            ids_by_job.setdefault(delivery.get("job"), set()).add(delivery["id"])
        for job_id, ids in ids_by_job.items():
            if len(ids) > 1:
                problems.append(f"job {job_id}'s webhook came under {len(ids)} ids: {sorted(ids)}")
        no_hook = [i for i in by_id if i not in ids_by_job]
        if no_hook:
            problems.append(f"{len(no_hook)} jobs' webhooks never reached the receiver: {sorted(no_hook)[:10]}")
        hooked_succeeded = {d["job"] for d in deliveries if d.get("type") == "job.succeeded"}
        in_bucket = {j for k, (_, j) in expected.items() if k in objects}
        if not (succeeded == hooked_succeeded == in_bucket):
            problems.append(
                f"`jobs list` ({len(succeeded)} succeeded), the receiver ({len(hooked_succeeded)}) and the bucket "
                f"({len(in_bucket)} jobs) disagree")
        duplicates = len(deliveries) - len({d["id"] for d in deliveries})

        # The API while probed.
        bad_answers = [p for p in self.probes if not answer_ok(p)]
        problems += [f"the API answered {p[1]} ({p[2]}, Retry-After {p[3]}) in {p[4]:.1f} s at "
                     f"{p[0] - self.probes[0][0]:.1f} s" for p in bad_answers[:5]]  # fmt: skip
        unavailable = sum(1 for p in self.probes if p[1] == 503)

        # The numbers, and what each fault must have shown.
        stats = self.numbers(len(by_id), elapsed)
        fenced = sum(stats["fenced"].values())
        if self.fault in ("partition", "kill") and stats["rescue"] is None:
            problems.append("no job w1 held was rescued by another host")
        if self.fault == "partition" and fenced == 0:
            problems.append("w1 finished nothing late: no result was refused or dropped by fencing")
        if self.fault == "db-outage" and not any(p[1] == 503 for p in self.probes):
            problems.append("the API never answered 503 while the database was down")
        if self.fault == "store-outage" and "storage_unavailable" not in stats["attempts"]:
            problems.append("no attempt failed with storage_unavailable while the store was down")
        if self.fault == "slow-link":
            slow, fast = stats["median_seconds"].get("w3"), stats["median_seconds"].get("w1")
            if not slow or not fast or slow <= fast:
                problems.append(f"w3 behind the slow link did not finish its jobs more slowly ({slow} s against {fast} s)")
        stats["unavailable"] = unavailable
        stats["probes"] = len(self.probes)
        stats["slowest"] = max((p[4] for p in self.probes), default=0)
        stats["duplicates"] = duplicates
        stats["deliveries"] = len(deliveries)
        stats["multipart"] = unfinished_uploads
        stats["objects"] = len(objects)
        stats["jobs"] = len(by_id)
        stats["failed"] = len(jobs) - len(succeeded)
        stats["problems"] = problems
        return stats

    def numbers(self, jobs, elapsed):
        def scalar(sql):
            value = self.psql(sql)
            return float(value) if value else None

        epoch = "extract(epoch from {})"
        span = scalar(f"SELECT {epoch.format('max(finished_at)')} - {epoch.format('min(created_at)')} "
                      "FROM pushprep_jobs")  # fmt: skip
        stats = {"fault": self.fault, "jobs_per_second": jobs / span if span else 0, "elapsed": elapsed}
        counts = {}
        for name, path in self.logs.items():
            if name in WORKERS:
                text = open(path, errors="replace").read()
                counts["refused"] = counts.get("refused", 0) + text.count("result refused: another claim owns")
                counts["dropped"] = counts.get("dropped", 0) + text.count("result dropped: the lease is no longer")
                counts["withheld"] = counts.get("withheld", 0) + text.count("the lease was lost before publishing")
        stats["fenced"] = counts
        per_host = self.psql("SELECT split_part(worker, '-', 1), count(*) FROM pushprep_job_attempts "
                             "WHERE outcome = 'succeeded' GROUP BY 1 ORDER BY 1")  # fmt: skip
        stats["per_host"] = dict(line.split("|") for line in per_host.splitlines())
        medians = self.psql(
            "SELECT split_part(worker, '-', 1), percentile_cont(0.5) WITHIN GROUP (ORDER BY "
            f"{epoch.format('ended_at - started_at')}) FROM pushprep_job_attempts WHERE outcome = 'succeeded' "
            "GROUP BY 1 ORDER BY 1")  # fmt: skip
        stats["median_seconds"] = {h: float(v) for h, v in (line.split("|") for line in medians.splitlines())}
        stats["attempts"] = self.psql(
            "SELECT coalesce(outcome, 'open') || coalesce(' (' || error_code || ')', ''), count(*) "
            "FROM pushprep_job_attempts GROUP BY 1 ORDER BY 1").replace("\n", ", ").replace("|", " ")  # fmt: skip
        # PushPrep's statements (the role postgres; the harness's own are left out) and their time
        # in the server, planning and execution (pg_stat_statements), and the WAL of the whole run.
        statements, milliseconds = self.psql(
            "SELECT sum(calls), sum(total_exec_time + total_plan_time) FROM pg_stat_statements WHERE dbid = "
            "(SELECT oid FROM pg_database WHERE datname = 'pushprep') "
            "AND userid = (SELECT oid FROM pg_roles WHERE rolname = 'postgres')").split("|")  # fmt: skip
        top = self.psql(
            "SELECT round((sum(total_exec_time + total_plan_time) / %d)::numeric, 3), sum(calls), "
            "regexp_replace(left(min(query), 70), '\\s+', ' ', 'g') FROM pg_stat_statements WHERE dbid = "
            "(SELECT oid FROM pg_database WHERE datname = 'pushprep') AND userid = "
            "(SELECT oid FROM pg_roles WHERE rolname = 'postgres') GROUP BY queryid ORDER BY 1 DESC LIMIT 3" % jobs)
        stats["pg_top"] = [line.split("|", 2) for line in top.splitlines()]
        wal = self.psql("SELECT wal_bytes FROM pg_stat_wal")
        # The server's CPU (all its processes, /proc): a restarted server's processes are new, and
        # their CPU time before the fault is gone with them.
        cpu = None if self.fault.startswith("db-") else self.db_cpu / jobs * 1000
        stats["pg"] = (float(statements or 0) / jobs, float(wal or 0) / jobs, float(milliseconds or 0) / jobs, cpu)
        if self.fault_window is None:
            stats["rescue"] = None
            stats["recover"] = None
            return stats
        start, end = self.fault_window
        # Jobs whose holder is gone: w1's, or any host's whose lease ran out while the database was down.
        holder = "w1-%" if self.fault in ("partition", "kill") else "%"
        # Rescue latency: for each attempt of w1 that the fault ended (it began before the fault
        # ended and had not ended when it began), from the fault (or the claim, when w1 claimed
        # the job as its link went down) to the job's next attempt.
        stats["rescue"] = scalar(
            f"SELECT max({epoch.format('n.started_at')} - greatest({epoch.format('a.started_at')}, {start})) "
            "FROM pushprep_job_attempts a "
            "JOIN LATERAL (SELECT min(started_at) AS started_at FROM pushprep_job_attempts b "
            "WHERE b.job_id = a.job_id AND b.started_at > a.started_at) n ON true "
            f"WHERE a.worker LIKE '{holder}' AND (a.outcome IS NULL OR a.outcome = 'expired') "
            f"AND {epoch.format('a.started_at')} <= {end} AND ({epoch.format('a.ended_at')} IS NULL "
            f"OR {epoch.format('a.ended_at')} >= {start})")  # fmt: skip
        if self.fault in ("partition", "kill"):
            first = scalar(f"SELECT min({epoch.format('ended_at')}) FROM pushprep_job_attempts WHERE "
                           f"worker LIKE 'w1-%' AND outcome = 'succeeded' AND {epoch.format('ended_at')} > {end}")  # fmt: skip
        else:
            first = scalar(f"SELECT min({epoch.format('ended_at')}) FROM pushprep_job_attempts WHERE "
                           f"outcome = 'succeeded' AND {epoch.format('started_at')} > {end}")  # fmt: skip
        stats["recover"] = first - end if first else None
        stats["window"] = end - start
        return stats


def object_files(attachment):
    """(key, sha256 or None) of every stored file of a manifest entry: the output and its
    renditions (with their SHA-256), a movie's poster (the manifest gives it none)."""
    files = [(f"push/{attachment['file']}", attachment["sha256"])]
    if attachment.get("poster"):
        files.append((f"push/{attachment['poster']['file']}", None))
    for rendition in (attachment.get("renditions") or {}).values():
        if rendition:
            files.append((f"push/{rendition['file']}", rendition["sha256"]))
    return files


def answer_ok(probe):
    _, status, code, retry_after, seconds = probe
    if seconds > 15 or status is None:
        return False
    if status == 503:
        return retry_after is not None and code in ("queue_unavailable", "storage_unavailable")
    return status in (200, 429)


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError):
        return None


def wait_until(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise CheckFailed(f"timed out after {seconds} s waiting for {what}")


# MARK: - Output


def table(stats):
    fenced = stats["fenced"]
    rows = [
        ("jobs", f"{stats['jobs']} ({stats['failed']} failed permanently)"),
        ("jobs per second", f"{stats['jobs_per_second']:.1f} (all {stats['jobs']} over {stats['elapsed']:.0f} s)"),
        ("rescue latency", seconds_text(stats.get("rescue"), "no job was rescued")),
        ("fenced late finishes", f"{sum(fenced.values())} (refused by the queue {fenced.get('refused', 0)}, "
                                 f"dropped after a lost lease {fenced.get('dropped', 0)}, "
                                 f"not published {fenced.get('withheld', 0)})"),
        ("duplicate deliveries", f"{stats['duplicates']} (of {stats['deliveries']} deliveries)"),
        ("time to recover", seconds_text(stats.get("recover"), {
            "partition": "w1 finished no job after its link came back",
            "kill": "w1 finished no job after it came back",
            "slow-link": "no fault to recover from (w3 is slow all run)"}.get(stats["fault"], "no job started after"))),
        ("fault lasted", seconds_text(stats.get("window"), "the whole run")),
        ("API answers while probed", f"{stats['probes']} ({stats['unavailable']} were 503 with Retry-After, "
                                     f"the slowest took {stats['slowest']:.1f} s)"),
        ("finished by host", ", ".join(f"{h} {n} (median {stats['median_seconds'].get(h, 0):.2f} s)"
                                       for h, n in sorted(stats["per_host"].items()))),
        ("attempts by outcome", stats["attempts"]),
        ("PostgreSQL per job", f"{stats['pg'][0]:.1f} statements taking {stats['pg'][2]:.2f} ms, "
                               f"{stats['pg'][1] / 1024:.1f} KiB of WAL"
                               + (" (since the restart)" if stats["pg"][3] is None else
                                  f"; the server's CPU {stats['pg'][3]:.2f} ms")),
        ("costliest statements", "; ".join(f"{ms} ms/job, {calls} calls: {text}"
                                           for ms, calls, text in stats.get("pg_top", []))),
        ("objects in the bucket", str(stats["objects"])),
        ("unfinished multipart uploads", "; ".join(stats["multipart"]) or "none"),
    ]  # fmt: skip
    width = max(len(r[0]) for r in rows)
    lines = [f"fault: {stats['fault']}"] + [f"  {name.ljust(width)}  {value}" for name, value in rows]
    return "\n".join(lines)


def seconds_text(value, otherwise):
    return f"{value:.1f} s" if value is not None else otherwise


# MARK: - Scale on paper


def postgres_cpu_seconds(host):
    """User and system CPU seconds of the postgres processes on `host` (the server and its
    backends, also those gone: a backend's time is added to its parent's children fields when it
    ends)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in cluster_net.run("ip", "netns", "pids", host.namespace).split():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if name != "postgres":
            continue
        parent = int(fields[1])
        # utime, stime; the postmaster's cutime, cstime hold its ended backends'.
        total += (int(fields[11]) + int(fields[12])) / ticks
        if not _is_postgres(parent):
            total += (int(fields[13]) + int(fields[14])) / ticks
    return total


def _is_postgres(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() == "postgres"
    except OSError:
        return False


def scale(args):
    """The queue bench's no-op jobs with 1, 3 and 10 worker hosts, each a network namespace of its
    own, against PostgreSQL on the db host; PostgreSQL's statements, WAL and CPU per job."""
    counts = [int(n) for n in args.scale_hosts.split(",")]
    run = Run(args, "scale")
    bench = os.path.abspath(args.bench)
    rows = []
    try:
        run.net = cluster_net.Network(SUBNET)
        run.hosts = {"db": run.net.add_host("db", 2)}
        for i in range(1, max(counts) + 1):
            run.hosts[f"w{i}"] = run.net.add_host(f"w{i}", 10 + i)
        run.hosts["ctl"] = run.net.add_host("ctl", 100)
        run.net.enter(run.hosts["ctl"])
        run.start_db()
        for repeat in range(args.scale_repeat):
            for hosts in counts:
                database = f"b{hosts}_{repeat}"
                run.psql(f"CREATE DATABASE {database}", database="postgres")
                run.psql("CREATE EXTENSION pg_stat_statements", database=database)
                run.psql("SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')", database=database)
                cpu = postgres_cpu_seconds(run.hosts["db"])
                command = [bench, "run", "--queue", f"postgres://postgres@{SUBNET}.2:5432/{database}?sslmode=disable", "--jobs",
                           str(args.scale_jobs), "--workers", str(hosts), "--processes",
                           "--concurrency", str(args.scale_concurrency)]  # fmt: skip
                for i in range(1, hosts + 1):
                    command += ["--worker-netns", run.hosts[f"w{i}"].namespace]
                output = subprocess.run(command, capture_output=True, text=True)
                cpu = postgres_cpu_seconds(run.hosts["db"]) - cpu
                line = next((l for l in output.stdout.splitlines() if l.startswith("bench queue:")), "")
                if output.returncode != 0 or "FAILED" in line:
                    raise CheckFailed(f"the queue bench failed with {hosts} hosts: {line or output.stderr[-2000:]}")
                fields = dict(part.split("=", 1) for part in line.split()[2:] if "=" in part)
                statements, exec_ms = run.psql(
                    "SELECT sum(calls), sum(total_exec_time) FROM pg_stat_statements "
                    f"WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{database}')", database=database
                ).split("|")  # fmt: skip
                wal = run.psql("SELECT wal_bytes FROM pg_stat_wal", database=database)
                jobs = args.scale_jobs
                rows.append((hosts, repeat, float(fields["process_per_s"]), float(statements) / jobs,
                             float(wal) / jobs, cpu / jobs * 1000, float(exec_ms) / jobs))  # fmt: skip
                log(f"scale: {hosts} hosts: {line}")
    finally:
        run.net.close()
    print(f"queue bench across hosts: {args.scale_jobs} no-op jobs a run, concurrency {args.scale_concurrency} per "
          f"host, PostgreSQL on its own host (fsync on); medians of {args.scale_repeat} runs")  # fmt: skip
    print("  hosts  jobs/s  statements/job  WAL bytes/job  PostgreSQL CPU ms/job  execution ms/job")
    for hosts in counts:
        mine = [r for r in rows if r[0] == hosts]

        def median(i):
            values = sorted(r[i] for r in mine)
            return values[len(values) // 2]

        print(f"  {hosts:5d}  {median(2):6.0f}  {median(3):14.1f}  {median(4):13.0f}  {median(5):21.3f}  "
              f"{median(6):16.3f}")  # fmt: skip
    return 0


# MARK: - Main


def child(args):
    # SIGTERM (a CI timeout, Ctrl-C's cousin) ends the run through its cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    run = Run(args, args.fault)
    try:
        stats = run.execute(args.corpus, args.names.split(","), args.samples)
    except Exception as error:  # noqa: BLE001
        traceback.print_exc()
        stats = {"fault": args.fault, "error": str(error)}
    finally:
        run.stop.set()
        if hasattr(run, "net"):
            run.net.close()
    passed = "error" not in stats and not stats["problems"]
    if passed and not args.keep:
        shutil.rmtree(run.work, ignore_errors=True)
    stats["work"] = run.work
    print(json.dumps(stats, default=str), flush=True)
    return 0 if passed else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/pushprep"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--scale", action="store_true", help="measure the queue across 1, 3 and 10 hosts instead")
    parser.add_argument("--scale-hosts", default="1,3,10")
    parser.add_argument("--scale-jobs", type=int, default=20000)
    parser.add_argument("--scale-concurrency", type=int, default=2)
    parser.add_argument("--scale-repeat", type=int, default=3)
    parser.add_argument("--bench", default=os.path.join(ROOT, ".build/release/pushprep-queue-bench"))
    parser.add_argument("--fault", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--names", help=argparse.SUPPRESS)
    parser.add_argument("--samples", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("cluster: needs root (network namespaces); run it as root, as CI does")
    if args.fault:
        return child(args)
    if args.scale:
        return scale(args)
    faults = args.faults.split(",")
    for fault in faults:
        if fault not in FAULTS:
            sys.exit(f"cluster: unknown fault {fault!r}; the faults are {', '.join(FAULTS)}")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"cluster: no pushprep at {args.binary} (make release builds it)")
    samples = os.path.join(ROOT, "samples")
    sample_count = len(os.listdir(samples))
    corpus = os.path.join("/tmp/pushprep-cluster", f"corpus-{args.jobs}")
    started = time.time()
    names_file = os.path.join(corpus, "names.json")
    if not os.path.exists(names_file):
        log(f"making {args.jobs - sample_count} media files in {corpus}")
        shutil.rmtree(corpus, ignore_errors=True)
        names = make_corpus(corpus, args.jobs - sample_count)
        with open(names_file, "w") as f:
            json.dump(names, f)
    names = json.load(open(names_file))
    os.chmod(corpus, 0o755)
    results = []
    for fault in faults:
        log(f"run: {fault}, {args.jobs} jobs")
        child_args = [sys.executable, os.path.abspath(__file__), "--fault", fault, "--corpus", corpus, "--names",
                      ",".join(names), "--samples", samples, "--binary", args.binary, "--jobs", str(args.jobs)]  # fmt: skip
        if args.keep:
            child_args.append("--keep")
        process = subprocess.Popen(child_args, stdout=subprocess.PIPE, text=True)
        signal.signal(signal.SIGTERM, lambda *_: (process.terminate(), process.wait(), sys.exit(1)))
        output = subprocess.CompletedProcess(child_args, 0, process.communicate()[0])
        output.returncode = process.returncode
        lines = [line for line in output.stdout.splitlines() if line.startswith("{")]
        stats = json.loads(lines[-1]) if lines else {"fault": fault, "error": f"the run exited {output.returncode}"}
        results.append(stats)
        if "error" in stats:
            print(f"fault: {fault}\n  FAILED: {stats['error']} (logs in {stats.get('work')})", flush=True)
            continue
        print(table(stats), flush=True)
        for problem in stats["problems"]:
            print(f"  FAILED: {problem}", flush=True)
        if stats["problems"]:
            print(f"  logs in {stats['work']}", flush=True)
    failed = [r["fault"] for r in results if "error" in r or r["problems"]]
    print(f"cluster: {len(results) - len(failed)} of {len(results)} fault runs passed in {time.time() - started:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
