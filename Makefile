# PushPrep: the two commands a newcomer runs are `make demo` and `make test`.
# Every dependency the project needs on a fresh Debian 12 machine is installed here.

SHELL := /bin/bash
.DEFAULT_GOAL := build

# Swift is expected at /opt/swift (the toolchain's tarball layout) or on PATH.
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift

# libvips and FFmpeg's libraries are linked in-process (the -dev packages); libvips-tools and
# ffmpeg are the reference programs the tests and benchmarks compare against; time measures
# peak memory in `make bench`. libsqlite3-dev is the job queue's embedded database (through
# GRDB) and sqlite3 its command-line tool (a test edits a database with it); postgresql is the
# server the queue tests and the queue benchmark start in a temporary directory.
# python3-jsonschema checks every manifest the tests produce against schema/manifest.schema.json;
# python3-venv makes the virtualenv `make pyenv` installs the tests' Python references into;
# strace counts how often a test's input is opened. libgs-common ships the ICC profiles
# (/usr/share/color/icc/ghostscript: an Adobe RGB-compatible a98.icc, the ProPhoto rommrgb.icc, an
# sRGB one) the colour tests tag their wide-gamut and sRGB fixtures with. curl and jq are what
# scripts/first-hour.sh (a new user's first hour, run by `make test`) talks to `serve` and reads JSON with.
# libseccomp-dev is the library (and header) decoder processes build their seccomp filter with
# (Sources/CSandboxShims).
APT_PACKAGES := pkg-config libvips-dev libvips-tools \
	libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev ffmpeg time \
	libsqlite3-dev sqlite3 postgresql python3-jsonschema python3-venv strace libgs-common curl jq \
	libseccomp-dev

# The SigV4 signer's test compares it with botocore's (scripts/sigv4_reference.py); the storage
# tests run moto's S3 server (`python -m moto.server`) and read objects back with boto3
# (scripts/moto_setup.py, scripts/s3_read.py); the server's tests run schemathesis against the
# live `pushprep serve` from the document it serves. All pinned, in a virtualenv of Debian's
# python3 under .build, so no system Python is touched. boto3 requires the botocore of its own
# minor version: move the two together.
PYENV := .build/pyenv
BOTOCORE_VERSION := 1.43.11
BOTO3_VERSION := 1.43.11
MOTO_VERSION := 5.2.5
SCHEMATHESIS_VERSION := 4.32.5
# `make test-browser` drives Debian's chromium through its chromedriver with selenium (the
# driver at /usr/bin/chromedriver, never one Selenium Manager would download) under pytest
# (schemathesis takes pytest >=8.4,<10 as well). Not selenium 4.52.0: it requires a certifi newer
# than any the index has (>=2026.10.23).
SELENIUM_VERSION := 4.51.0
PYTEST_VERSION := 9.2.0
# Pillow: the independent decoder the rendition tests read every Android and web rendition with.
PILLOW_VERSION := 13.0.0

DEMO_OUT := demo-out

.PHONY: deps bench-deps browser-deps pyenv build release test test-cluster bench-cluster test-release test-release-pass first-hour first-hour-pass soak test-browser demo lint format bench samples clean fuzz fuzz-seeds test-sanitize

## deps: install the missing Debian packages (apt-get update first, only when something is missing)
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: swift not found (expected at /opt/swift/usr/bin or on PATH)"; exit 1; }
	@missing=""; \
	for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:$$missing"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

## bench-deps: what only `make bench` needs: wrk (load), nginx (the static-file reference) and
# gcc, which builds the bare libvips loop (scripts/bare-thumbnail.c) the image section compares with
BENCH_APT_PACKAGES := wrk nginx gcc
bench-deps: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_APT_PACKAGES)"

## pyenv: the Python packages the tests use (botocore, boto3, moto's server, schemathesis, selenium, pytest, Pillow), in .build/pyenv; once
# Skipped when all import at their pinned versions (moto.server too: it needs the [server]
# extra's Flask); otherwise pip brings the venv to the pins (19 s from scratch, 368 MB, measured with `time` on a new venv).
PYENV_CHECK := import sys, importlib.metadata as m, botocore, boto3, moto, moto.server, selenium, pytest, PIL; \
	sys.exit((botocore.__version__, boto3.__version__, moto.__version__, m.version("schemathesis"), \
	selenium.__version__, pytest.__version__, PIL.__version__) != ("$(BOTOCORE_VERSION)", "$(BOTO3_VERSION)", "$(MOTO_VERSION)", \
	"$(SCHEMATHESIS_VERSION)", "$(SELENIUM_VERSION)", "$(PYTEST_VERSION)", "$(PILLOW_VERSION)"))
pyenv: deps
	@$(PYENV)/bin/python -c '$(PYENV_CHECK)' 2>/dev/null || { \
		echo "Installing botocore $(BOTOCORE_VERSION), boto3 $(BOTO3_VERSION), moto[server] $(MOTO_VERSION), schemathesis $(SCHEMATHESIS_VERSION), selenium $(SELENIUM_VERSION), pytest $(PYTEST_VERSION) and Pillow $(PILLOW_VERSION) into $(PYENV)"; \
		/usr/bin/python3 -m venv $(PYENV) && \
		$(PYENV)/bin/python -m pip install --quiet --disable-pip-version-check \
			"botocore==$(BOTOCORE_VERSION)" "boto3==$(BOTO3_VERSION)" "moto[server]==$(MOTO_VERSION)" \
			"schemathesis==$(SCHEMATHESIS_VERSION)" "selenium==$(SELENIUM_VERSION)" "pytest==$(PYTEST_VERSION)" \
			"pillow==$(PILLOW_VERSION)"; }

## browser-deps: what only `make test-browser` needs: Debian's chromium, its chromedriver, and a
# font (a headless chromium with no font draws no text, and the screenshots are checked)
BROWSER_APT_PACKAGES := chromium chromium-driver fonts-dejavu-core
browser-deps: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BROWSER_APT_PACKAGES)"

## build: debug build of the library, the CLI and the tests
build: deps
	$(SWIFT) build --build-tests

## release: optimised build of the CLI
release: deps
	$(SWIFT) build -c release --product pushprep

## test: install, build, run every test; the end-to-end suites again against the release build
# Inside a `swift test` process one test at a time: many tests wait synchronously for vips, ffmpeg
# or a worker process, and on a 2-core machine two such waits fill Swift's cooperative pool,
# stalling every other test for tens of seconds (a worker test then misses what it watches for).
# Measured with `swift test` in parallel, the suite saved only ~90 s. Processes do not share a
# pool, so the passes run side by side instead, each a process of its own: the first pass in two
# halves (TEST_SECOND_HALF's suites, and every other suite but TEST_ALONE's, which run after
# them), the second pass and scripts/first-hour.sh beside them (its servers bind port 0 and say
# which port they got, so a test beside it cannot take one in between). Much of a test's time is a wait (a
# process starting, a heartbeat, a server answering), which the other processes fill. Every line
# is prefixed with its pass. They run the
# test binary itself (what `swift test --skip-build` runs): `swift test` holds a lock on .build
# for as long as it runs, so three of them would run one after the other.
# The second pass runs the suites that start `pushprep` processes (the CLI, publishing, workers,
# serve) with PUSHPREP_BINARY naming the release build: a defect only the optimiser shows (issue 26
# §0: `process --store s3://` wrote a corrupt manifest in release builds only) fails `make test`.
# The logs are kept in .build/test.log, .build/test-2.log, .build/test-alone.log,
# .build/test-release.log and .build/first-hour.log; on failure the failing tests' lines are repeated at the end, where a CI
# log's tail shows them. `make test TEST_ARGS="--filter Preflight"` runs a subset of the first
# pass (in one process); `make test-release` runs the second pass alone.
E2E_SUITES := CLITests|ObjectStoreCLITests|ObjectStorePayloadCLITests|PayloadPlatformCLITests|PreflightCLITests|ReportCLITests|CorpusProcessTests|HostileMediaTests|WorkerProcessTests|WorkerStoreTests|QueueHardeningTests|ServeWebhookTests|PostgresServeTests|UploadAndPayloadTests|JobsAPITests|AuthAndLimitsTests|ServeMemoryTests|SoakTests
# The first pass's second half: about half its time (by the suites' times in a CI log).
TEST_SECOND_HALF := WorkerProcessTests|IsolatedWorkerFaultTests|QueueConformanceTests|SchemathesisTests|ObjectStoreCLITests|WebhookDispatcherTests|ObjectStorePayloadCLITests|VideoPipelineTests|CorpusTests|PayloadFromJobCLITests
# Tests the first pass leaves to the second: the chaos runs (2000 jobs, workers SIGKILLed at
# random, on SQLite, PostgreSQL and a bucket) assert on what `pushprep worker` processes do, and
# the second pass runs those processes from the release build, the one users run. Both passes'
# test code is the debug build, so running them twice tested the same queue code twice, for
# about 125 s of CPU on 2 cores (CI log of 97af016: 70 s and 55 s in the first pass).
TEST_RELEASE_ONLY := killingWorkersAtRandom
# Suites of the first pass that run alone, after the others: WorkerMemoryBudgetTests' jobs must
# finish processing within a 1 s --job-timeout, which a debug build beside two other passes may
# not (on a loaded machine, attempts 2 to 4 of `memoryWaitIsNotJobTime`'s jobs were timeouts);
# MemoryEstimateTests measures peaks, which contention raises (beside the other passes, the
# corpus's animated-loop-3.gif measured 8.1 MiB for an estimate of 4.0; alone it passes). Both measure
# the processes they start, which are the release build's, the one users run and the one the
# estimates are calibrated on: 99 s against 143 s with the debug build's (issue 30's stop).
TEST_ALONE := WorkerMemoryBudgetTests|MemoryEstimateTests
# The failing tests' lines of the log $(1).
FAILURES = awk '/recorded an issue/ { print; more = 1; next } more && /^↳/ { print; next } { more = 0 } \
	(/^✘ Test / && !/^✘ Test run with/) || /^error:|Fatal error/' $(1) | head -80
RUN_TESTS = set -o pipefail; $(SWIFT) test --skip-build --no-parallel $(1) 2>&1 | tee $(2); status=$$?; \
	if [ $$status -ne 0 ]; then \
		echo; echo "Failing tests (whole log: $(2)):"; \
		$(call FAILURES,$(2)); \
	fi; \
	exit $$status
# In the background: COMMAND $(2), its lines into the log $(3) and, prefixed [$(1)], to the
# terminal; its exit status into $(3).status. The terminal's copy follows the log until the command
# ends (not through a pipe: a process a failed script leaves behind would hold it open).
SIDE_BY_SIDE = { $(2) > $(3) 2>&1; echo $$? > $(3).status; } & \
	tail -n +1 -s 0.2 -F --pid=$$! $(3) 2>/dev/null | sed -u 's|^|[$(1)] |' &
# The status of each log of $(1) written by SIDE_BY_SIDE; a failed one's failing tests.
SIDE_BY_SIDE_STATUS = status=0; for log in $(1); do \
		[ "$$(cat $$log.status 2>/dev/null)" = 0 ] && continue; status=1; \
		echo; echo "Failing tests (whole log: $$log):"; $(call FAILURES,$$log); \
	done; exit $$status
TEST_LOGS := .build/test.log .build/test-2.log .build/test-release.log .build/first-hour.log .build/test-alone.log
# The tests as `swift test --skip-build --no-parallel` runs them (without colours: the logs are read).
TEST_BINARY = env NO_COLOR=1 $$debug/PushPrepPackageTests.xctest \
	--testing-library swift-testing --no-parallel
test: build release pyenv browser-deps
	@rm -f $(TEST_LOGS) $(addsuffix .status,$(TEST_LOGS)); \
	debug=$$($(SWIFT) build --show-bin-path); release=$$($(SWIFT) build -c release --show-bin-path)/pushprep; \
	logs=".build/test.log"; \
	if [ -n "$(TEST_ARGS)" ]; then \
		$(call SIDE_BY_SIDE,debug,$(TEST_BINARY) $(TEST_ARGS),.build/test.log) \
	else \
		logs="$$logs .build/test-2.log"; \
		$(call SIDE_BY_SIDE,debug 1/2,$(TEST_BINARY) --skip '$(TEST_SECOND_HALF)|$(TEST_ALONE)|$(TEST_RELEASE_ONLY)',.build/test.log) \
		$(call SIDE_BY_SIDE,debug 2/2,$(TEST_BINARY) --filter '$(TEST_SECOND_HALF)' --skip '$(TEST_RELEASE_ONLY)',.build/test-2.log) \
	fi; \
	$(call SIDE_BY_SIDE,release,env PUSHPREP_BINARY=$$release $(TEST_BINARY) --filter '$(E2E_SUITES)',.build/test-release.log) \
	$(call SIDE_BY_SIDE,first hour,scripts/first-hour.sh $$release,.build/first-hour.log) \
	wait; \
	if [ -z "$(TEST_ARGS)" ]; then \
		logs="$$logs .build/test-alone.log"; \
		$(call SIDE_BY_SIDE,debug alone,env PUSHPREP_BINARY=$$release $(TEST_BINARY) --filter '$(TEST_ALONE)',.build/test-alone.log) \
		wait; \
	fi; \
	$(call SIDE_BY_SIDE_STATUS,$$logs .build/test-release.log .build/first-hour.log)

## first-hour: scripts/first-hour.sh against the release build: the path a new user walks (process,
# payload and pre-flight per dialect, the queue, serve by URL and upload, the console and reports in
# chromium), every step asserted. Run beside the test passes by `make test`.
first-hour: release pyenv browser-deps
	@$(MAKE) --no-print-directory first-hour-pass

first-hour-pass:
	@echo; echo "== A new user's first hour (scripts/first-hour.sh, release build)"
	@scripts/first-hour.sh $$($(SWIFT) build -c release --show-bin-path)/pushprep

## test-release: the end-to-end suites against the release build (the second pass of `make test`)
test-release: release pyenv
	$(SWIFT) build --build-tests
	@$(MAKE) --no-print-directory test-release-pass

test-release-pass:
	@echo; echo "== The end-to-end suites against the release build (PUSHPREP_BINARY)"
	@export PUSHPREP_BINARY=$$($(SWIFT) build -c release --show-bin-path)/pushprep; \
		$(call RUN_TESTS,--filter '$(E2E_SUITES)',.build/test-release.log)

## soak: the soak test alone and long: SOAK_SECONDS (default 120) of mixed load per backend
# (SQLite, then PostgreSQL) on one `pushprep serve` of the release build, so that its memory bound
# applies too (Tests/PushPrepServerTests/SoakTests.swift says what runs and what is asserted; it
# prints the figures). The short version, 6 s per backend, is in `make test`'s release pass.
SOAK_SECONDS ?= 120
soak: build release pyenv
	@export PUSHPREP_SOAK_SECONDS=$(SOAK_SECONDS) PUSHPREP_BINARY=$$($(SWIFT) build -c release --show-bin-path)/pushprep; \
		$(call RUN_TESTS,--filter SoakTests,.build/soak.log)

## test-cluster: PushPrep on separate network hosts, one fault per run (root; scripts/cluster.py)
# Network namespaces joined by veth pairs to a bridge on 10.77.0.0/24 (iproute2; nothing is added to
# the machine's own namespace): PostgreSQL, moto's S3 server, `pushprep serve --workers 0`, three
# `pushprep worker` hosts (the release build), a webhook receiver and a media server. Each run
# processes CLUSTER_JOBS real small media jobs, submitted by URL and by upload, through one fault of
# CLUSTER_FAULTS (a partition, a killed host, a database restart, the database down 20 s, a store outage, a
# slow link), then
# checks every job, object, multipart upload and webhook, and prints a table of figures.
# `.ci/run` runs the short version: one fault, 200 jobs.
CLUSTER_FAULTS ?= partition,kill,db-restart,db-outage,store-outage,slow-link
CLUSTER_JOBS ?= 2000
CLUSTER_APT_PACKAGES := iproute2 util-linux
test-cluster: release pyenv
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(CLUSTER_APT_PACKAGES)"
	$(PYENV)/bin/python scripts/cluster.py --faults $(CLUSTER_FAULTS) --jobs $(CLUSTER_JOBS) \
		--binary $$($(SWIFT) build -c release --show-bin-path)/pushprep $(CLUSTER_ARGS)

## bench-cluster: the queue's claim/finish rate with 1, 3 and 10 worker hosts of no-op jobs (the queue
# bench's workers in network namespaces of their own, root) against PostgreSQL on a host of its own,
# and PostgreSQL's statements, WAL bytes and CPU time per job (pg_stat_statements, pg_stat_wal,
# /proc): what the README's estimate of workers per PostgreSQL comes from. `CLUSTER_SCALE_ARGS`
# passes --scale-hosts, --scale-jobs (20000), --scale-concurrency (2) and --scale-repeat (3).
bench-cluster: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(CLUSTER_APT_PACKAGES)"
	$(SWIFT) build -c release --product pushprep-queue-bench
	python3 scripts/cluster.py --scale --bench $$($(SWIFT) build -c release --show-bin-path)/pushprep-queue-bench \
		$(CLUSTER_SCALE_ARGS)

## test-browser: the batch report and the console pages in a real, headless chromium (Tests/Browser)
# The tests make their own inputs, run `pushprep process --report` and `pushprep serve` (debug
# build) on 127.0.0.1, and fail on a console error, a request leaving the page's origin, a blank
# screenshot or a thumbnail out of place; screenshots and logs land in .build/browser/. About 2.5 min
# with pushprep built (49 tests; `make test-browser BROWSER_ARGS=-q` on the shared 2-core machine: 154 s).
# `make test-browser BROWSER_ARGS="-k report"` runs a subset.
test-browser: browser-deps pyenv
	$(SWIFT) build --product pushprep
	PUSHPREP=$$($(SWIFT) build --show-bin-path)/pushprep PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONDONTWRITEBYTECODE=1 \
		$(PYENV)/bin/python -m pytest -p no:cacheprovider \
		-v -ra Tests/Browser $(BROWSER_ARGS)

## demo: process samples/ into demo-out/ and show the result
demo: deps
	$(SWIFT) build --product pushprep
	@rm -rf $(DEMO_OUT)
	@echo
	@echo "$$ pushprep process samples --out $(DEMO_OUT) --base-url https://cdn.example.com/push --list --report $(DEMO_OUT)/report.html"
	@$$($(SWIFT) build --show-bin-path)/pushprep process samples --out $(DEMO_OUT) \
		--base-url https://cdn.example.com/push --list --report $(DEMO_OUT)/report.html
	@echo
	@echo "$$ pushprep payload $(DEMO_OUT)/manifest.json --title 'PushPrep demo' --body 'The samples, ready to push' > $(DEMO_OUT)/payload.json"
	@$$($(SWIFT) build --show-bin-path)/pushprep payload $(DEMO_OUT)/manifest.json --title 'PushPrep demo' \
		--body 'The samples, ready to push' > $(DEMO_OUT)/payload.json
	@echo
	@echo "$$ pushprep preflight $(DEMO_OUT)/payload.json"
	@$$($(SWIFT) build --show-bin-path)/pushprep preflight $(DEMO_OUT)/payload.json
	@echo
	@echo "Outputs and manifest: $(DEMO_OUT)/ (manifest: $(DEMO_OUT)/manifest.json, APNs payload: $(DEMO_OUT)/payload.json,"
	@echo "with the first attachment: iOS shows one per push; payload --id ID chooses another, --all sends every one)"
	@echo "The batch report, to open in a browser: $(DEMO_OUT)/report.html"

## lint: check formatting with swift format (the toolchain's) and .swift-format
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests
	@# NSString's path methods trap on some paths from outside (see Sources/PushPrepCore/IO/PathName.swift)
	@! grep -rn 'as NSString' Sources || { echo 'lint: use PathName instead of NSString path methods'; exit 1; }
	@# Swift 6.3's optimiser loses a tuple's earlier elements across a `try await` in a later one
	@# (issue 26 §0); scripts/lint-tuple-await.py says why and what to write instead
	@python3 scripts/lint-tuple-await.py Sources Tests
	@# A Task.sleep in a task group's child stays scheduled, with its task, until its deadline even
	@# when cancelled (swiftlang/swift#60441): per request, fetch or job that is memory kept for the
	@# whole timeout (issue 32). scripts/lint-raced-sleep.py says why and what to use instead.
	@python3 scripts/lint-raced-sleep.py Sources
	@# The queue knows jobs, not media (issue 29 §1): the queue bench links no libvips or FFmpeg
	@SWIFT=$(SWIFT) sh scripts/check-queue-links.sh

## format: rewrite sources in place with swift format
format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

## bench: PushPrep and the reference tools side by side, same run, same cores; then the job queue
# The image, video and memory sections also run `process --isolation process` beside `--isolation
# none` and print the ratios (issue 30); BENCH_ISOLATION=0 skips that. The whole process tree's
# memory is sampled from /proc by scripts/rss-tree.py (python3), as GNU time's peak is one process's.
bench: release bench-deps
	$(SWIFT) build -c release --product pushprep-queue-bench
	bin=$$($(SWIFT) build -c release --show-bin-path) && \
		PUSHPREP=$$bin/pushprep QUEUE_BENCH=$$bin/pushprep-queue-bench bash scripts/bench.sh

## samples: regenerate samples/ (committed; only needed when the script changes)
samples: deps
	bash scripts/make-samples.sh

## fuzz: build the libFuzzer targets (Fuzz/, a package of its own) and run each for FUZZ_SECONDS
# Each target runs on a scratch copy of Tests/FuzzCorpus/<target> (plus samples/ for detect and
# demux) in .build-fuzz/run/<target>; a crash, trap, sanitizer report or hang is written there
# as crash-*/timeout-*/leak-*/oom-* and fails the run. Copy it into Tests/FuzzCorpus/<target>/
# (after `-minimize_crash=1`) so that `make test` replays it. FUZZ_TARGETS="json url" runs some.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= detect bmp json url settings demux
FUZZ_BUILD := --package-path Fuzz --scratch-path .build-fuzz -c debug --sanitize=fuzzer --sanitize=address \
	-Xswiftc -sanitize=fuzzer,address
# Longest input per target: detection reads 4096 bytes (longer inputs check it reads no further);
# the demuxer stays small so that libav's own parsers are not what the time goes to.
fuzz: deps
	$(SWIFT) build $(FUZZ_BUILD)
	@bin=$$($(SWIFT) build $(FUZZ_BUILD) --show-bin-path); failed=""; \
	for t in $(FUZZ_TARGETS); do \
		dir=.build-fuzz/run/$$t; rm -rf $$dir; mkdir -p $$dir/corpus $$dir/artifacts; \
		cp Tests/FuzzCorpus/$$t/* $$dir/corpus/; \
		case $$t in detect|demux) cp samples/* $$dir/corpus/;; esac; \
		case $$t in detect) len=8192;; url) len=2048;; settings) len=4096;; *) len=65536;; esac; \
		echo "== fuzz-$$t: $(FUZZ_SECONDS) s, log $$dir/log"; \
		ASAN_OPTIONS=detect_leaks=0 $$bin/fuzz-$$t $$dir/corpus -max_total_time=$(FUZZ_SECONDS) \
			-max_len=$$len -timeout=20 -print_final_stats=1 \
			-artifact_prefix=$$PWD/$$dir/artifacts/ > $$dir/log 2>&1; \
		grep -E '^#[0-9]+ +DONE' $$dir/log | tail -1; \
		grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' $$dir/log; \
		if [ -n "$$(ls -A $$dir/artifacts)" ]; then \
			failed="$$failed $$t"; grep -E -A12 'ERROR: |Fatal error|Test unit written' $$dir/log | head -40; \
			ls $$dir/artifacts/*; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: found crashes in:$$failed (artifacts in .build-fuzz/run/*/artifacts)"; exit 1; fi

## fuzz-seeds: rewrite the seed-* inputs of Tests/FuzzCorpus (committed; needs ffmpeg)
fuzz-seeds: deps
	python3 scripts/make-fuzz-seeds.py

## test-sanitize: the image, video, audio, detection and JSON suites under AddressSanitizer,
## then the queue suites under ThreadSanitizer (builds of their own in .build-asan, .build-tsan)
ASAN_SUITES := BMPDecoder|VipsRuntimeTests|ProcessorTests|ProcessorMediaTests|AnimationVideoEncoderTests|VideoPipelineTests|AudioPipelineTests|MediaInputTests|MediaDetector|InspectorTests|JSONValueTests|PreflightTableTests|PayloadBuilderTests|FuzzRegressionTests
# The suites that start `pushprep worker` processes (QueueHardeningTests, WorkerProcessTests) are
# not run under TSan: it does not see Synchronization.Mutex hand a lock over on Linux (the futex
# slow path is in the uninstrumented libswiftSynchronization), reports every contended Mutex as a
# race, and halt_on_error stops the worker (see the README's "Fuzzing and sanitizers").
TSAN_SUITES := QueueConformanceTests|JobSpecTests|QueueURLTests|PostgresQueueTests
test-sanitize: deps
	$(SWIFT) build --build-tests --scratch-path .build-asan --sanitize=address
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --scratch-path .build-asan --sanitize=address \
		--no-parallel --filter '$(ASAN_SUITES)'
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --scratch-path .build-tsan --sanitize=thread \
		--no-parallel --filter '$(TSAN_SUITES)'

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan $(DEMO_OUT) pushprep-out bench-out
