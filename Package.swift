// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The packages' products the targets use, named once.
enum Product {
    static let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
    static let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
    static let system: Target.Dependency = .product(name: "SystemPackage", package: "swift-system")
    static let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
    static let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
    static let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
    /// Only offered as `_NIOFileSystem`; already built for hummingbird.
    static let nioFileSystem: Target.Dependency = .product(name: "_NIOFileSystem", package: "swift-nio")
    static let httpClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
    static let serviceLifecycle: Target.Dependency = .product(
        name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")
    static let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics")
    static let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")
    static let argumentParser: Target.Dependency = .product(
        name: "ArgumentParser", package: "swift-argument-parser")
    /// Hummingbird's request and response types, which the server and its tests name directly.
    static let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")

    /// An HTTP client on SwiftNIO, as the fetcher and the S3 client use it.
    static let httpClientStack: [Target.Dependency] = [nioCore, nioPosix, nioHTTP1, httpClient]
}

/// The products a test target imports besides its modules: the storage tests run an S3-speaking
/// NIO server that hashes what it receives; the server's tests run the API in-process
/// (HummingbirdTesting) and the webhook dispatcher in a ServiceGroup, shut down gracefully.
let testProducts: [String: [Target.Dependency]] = [
    "PushPrepCoreTests": [Product.logging],
    "PushPrepPayloadTests": [Product.logging],
    "PushPrepQueueTests": [Product.crypto, Product.logging, Product.nioCore, Product.nioPosix],
    "PushPrepRemoteTests": [Product.crypto, Product.logging, Product.nioCore, Product.nioPosix],
    "PushPrepStorageTests": [Product.crypto, Product.logging, Product.nioCore, Product.nioHTTP1, Product.nioPosix],
    "PushPrepTests": [Product.crypto, Product.logging],
    // The decoder pool's tests run a Processor through it, with a logger.
    "PushPrepSandboxTests": [Product.logging],
    "PushPrepServerTests": [
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        Product.httpTypes,
        Product.nioCore,
        Product.nioPosix,
        Product.nioHTTP1,
        Product.httpClient,
        Product.crypto,
        Product.logging,
        Product.serviceLifecycle,
        // The in-process `serve` (InProcessServe): its options parsed as the command parses them,
        // and a registry of its own for /metrics.
        Product.argumentParser,
        Product.prometheus,
    ],
]

/// A test target's dependencies: the modules it imports, the support target, and its products.
func testDependencies(_ name: String, _ modules: [String]) -> [Target.Dependency] {
    modules.map { .target(name: $0) } + ["PushPrepTestSupport"] + (testProducts[name] ?? [])
}

let package = Package(
    name: "PushPrep",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushprep", targets: ["pushprep"]),
        .library(name: "PushPrep", targets: ["PushPrep"]),
        .library(name: "PushPrepCore", targets: ["PushPrepCore"]),
        .library(name: "PushPrepPayload", targets: ["PushPrepPayload"]),
        .library(name: "PushPrepJSON", targets: ["PushPrepJSON"]),
        .library(name: "PushPrepQueue", targets: ["PushPrepQueue"]),
        .library(name: "PushPrepWorker", targets: ["PushPrepWorker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // Already Hummingbird's; named because the server imports them itself.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        // libvips, linked in-process. Only names the headers and the library.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // Fixed-arity wrappers for libvips' variadic calls, and process-wide setup.
        .target(
            name: "CVipsShims",
            dependencies: ["CVips"]
        ),
        // FFmpeg's libraries (5.1), linked in-process. Only names the headers and the libraries.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswscale libswresample",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])
            ]
        ),
        // Functions and constants for FFmpeg's macros (AVERROR, AV_NOPTS_VALUE, MKTAG, ...), the
        // log callback and the custom I/O that reads exactly one already-open file.
        .target(
            name: "CFFmpegShims",
            dependencies: ["CFFmpeg"]
        ),
        // The system calls that confine a decoder process (environment, descriptors, rlimits,
        // no_new_privs, Landlock) and its seccomp filter, with libseccomp (libseccomp-dev), and
        // the probes `sandbox-check` runs inside one.
        .target(
            name: "CSandboxShims",
            linkerSettings: [.linkedLibrary("seccomp", .when(platforms: [.linux]))]
        ),
        // The order- and literal-keeping JSON value and its strict parser (push payloads).
        .target(
            name: "PushPrepJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")],
            swiftSettings: swiftSettings
        ),
        // The shared vocabulary: media types and their detection, Apple's limits, settings, errors,
        // the manifest, attachment ids, source URLs (RemoteURL), network failures in words, the
        // file I/O every other module uses, and the log line every command writes.
        .target(
            name: "PushPrepCore",
            dependencies: [
                Product.crypto,
                Product.system,
                Product.logging,
                // NetworkFailure reads NIO's connection errors (every connection: sources,
                // webhooks, S3, PostgreSQL, the listener).
                Product.nioCore,
                Product.nioPosix,
            ],
            swiftSettings: swiftSettings
        ),
        // Remote sources: address policy, DNS pinning, the fetcher and its cache.
        .target(
            name: "PushPrepRemote",
            dependencies: [
                "PushPrepCore",
                Product.logging,
                Product.crypto,
                Product.system,
            ] + Product.httpClientStack,
            swiftSettings: swiftSettings
        ),
        // Object storage: AWS Signature Version 4 for S3 (the signer and the credentials it signs with)
        // and the S3 client that publishes outputs (HEAD, streamed PUT, parallel multipart, retries).
        // NIOFileSystem reads file ranges off the event loops, so request bodies stream from disk.
        .target(
            name: "PushPrepStorage",
            dependencies: [
                "PushPrepCore",
                // Transport failures are told in words by the remote sources' mapping.
                "PushPrepRemote",
                Product.crypto,
                Product.logging,
                Product.nioFileSystem,
            ] + Product.httpClientStack,
            swiftSettings: swiftSettings
        ),
        // Images (libvips), movies and sounds (FFmpeg's libraries): every C handle, shim call and
        // pointer stays behind this module's API.
        .target(
            name: "PushPrepMedia",
            dependencies: [
                "PushPrepCore",
                "CVips",
                "CVipsShims",
                "CFFmpeg",
                "CFFmpegShims",
                Product.logging,
                Product.nioPosix,
            ],
            swiftSettings: swiftSettings
        ),
        // Push payloads: building them and the pre-flight check (given image inspection and
        // processing as dependencies, never calling the media code itself).
        .target(
            name: "PushPrepPayload",
            dependencies: [
                "PushPrepCore",
                "PushPrepJSON",
                "PushPrepRemote",
                Product.logging,
            ],
            swiftSettings: swiftSettings
        ),
        // Processing: runs inputs (local or fetched) through the media pipelines into a manifest,
        // and inspects them; the library's entry point.
        .target(
            name: "PushPrep",
            dependencies: [
                "PushPrepCore",
                "PushPrepJSON",
                "PushPrepRemote",
                "PushPrepMedia",
                "PushPrepPayload",
                Product.logging,
                Product.crypto,
                Product.nioPosix,
            ],
            swiftSettings: swiftSettings
        ),
        // Decoder processes: how one confines itself, the framed messages on its channel, starting
        // one from the parent, and `sandbox-check`'s probes and report.
        .target(
            name: "PushPrepSandbox",
            dependencies: [
                "CSandboxShims",
                "PushPrep",
                "PushPrepCore",
                // The allocator's arenas and trimming (FreedMemory), as in a long-running process.
                "PushPrepMedia",
                // A decoder's processing session takes remote settings (it fetches nothing).
                "PushPrepRemote",
                Product.logging,
            ],
            swiftSettings: swiftSettings
        ),
        // What people look at: the notification as the phone shows it, the batch report
        // (`process --report`, `preflight --report`) and the pages of `serve`'s console, rendered
        // from Mustache templates compiled into the binary. Knows no media library: thumbnails
        // come in as bytes.
        .target(
            name: "PushPrepReport",
            dependencies: [
                "PushPrepCore",
                "PushPrepPayload",
                .product(name: "Mustache", package: "swift-mustache"),
                Product.crypto,
            ],
            swiftSettings: swiftSettings
        ),
        // The job queue (SQLite through GRDB, PostgreSQL through PostgresNIO), PushPrep's job
        // specs, and the generic worker service that claims jobs and runs them with a handler.
        // Knows jobs, not media: it links no media library (scripts/check-queue-links.sh).
        .target(
            name: "PushPrepQueue",
            dependencies: [
                "PushPrepCore",
                // The metadata check (JSONValue).
                "PushPrepJSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                Product.nioCore,
                Product.serviceLifecycle,
                Product.logging,
                Product.metrics,
                Product.crypto,
            ],
            swiftSettings: swiftSettings
        ),
        // The worker that processes media: the job handler that runs the processing session on
        // each claimed job and publishes its outputs (to the out directory or a bucket), the
        // memory budget's metrics, and building and running a worker as `worker` and `serve` do.
        .target(
            name: "PushPrepWorker",
            dependencies: [
                "PushPrep",
                "PushPrepCore",
                "PushPrepMedia",
                "PushPrepQueue",
                "PushPrepRemote",
                "PushPrepStorage",
                Product.serviceLifecycle,
                Product.unixSignals,
                Product.logging,
                Product.metrics,
            ],
            swiftSettings: swiftSettings
        ),
        // `pushprep serve`: the HTTP API (Hummingbird 2) in front of the queue, its auth, limits,
        // problem details, the published attachments, the console, and the webhooks that tell
        // clients a job ended (out through the remote sources' SSRF checks and pinned clients);
        // and `worker --metrics-port`'s metrics server, which routes `/metrics` as the API does.
        .target(
            name: "PushPrepServer",
            dependencies: [
                "PushPrep",
                "PushPrepCore",
                "PushPrepJSON",
                "PushPrepPayload",
                "PushPrepQueue",
                "PushPrepRemote",
                "PushPrepReport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                Product.httpTypes,
                // The request framing checks, as NIO channel handlers on HTTP types.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The console's pages.
                .product(name: "Mustache", package: "swift-mustache"),
                Product.serviceLifecycle,
                Product.logging,
                Product.metrics,
                Product.prometheus,
                Product.crypto,
                // Uploads stream to disk and attachments from it, off the event loops.
                Product.nioFileSystem,
                // Attachments: fstat of the descriptor they stream from.
                Product.system,
            ] + Product.httpClientStack,
            // The API's contract, served at /openapi.json from the binary itself.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        // What both command-line tools share: `--log-level`, seconds and values the core refuses
        // told as usage errors. Knows no media and no storage, so that the queue bench, which links
        // no media library, can take it (scripts/check-queue-links.sh).
        .target(
            name: "PushPrepCommandLine",
            dependencies: [
                "PushPrepCore",
                Product.argumentParser,
                Product.logging,
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pushprep",
            dependencies: [
                "PushPrepCommandLine",
                "PushPrep",
                "PushPrepCore",
                "PushPrepStorage",
                "PushPrepJSON",
                "PushPrepPayload",
                "PushPrepQueue",
                "PushPrepRemote",
                "PushPrepReport",
                "PushPrepServer",
                "PushPrepWorker",
                "PushPrepSandbox",
                Product.serviceLifecycle,
                Product.unixSignals,
                Product.metrics,
                Product.prometheus,
                Product.argumentParser,
                Product.logging,
                Product.system,
            ],
            swiftSettings: swiftSettings
        ),
        // `make bench`'s queue section: the queue's own throughput with no-op jobs. Links no
        // media library (scripts/check-queue-links.sh, run by `make lint`).
        .executableTarget(
            name: "pushprep-queue-bench",
            dependencies: [
                "PushPrepCommandLine",
                "PushPrepCore",
                "PushPrepQueue",
                Product.argumentParser,
                Product.logging,
                Product.serviceLifecycle,
                Product.unixSignals,
            ],
            swiftSettings: swiftSettings
        ),
        // What the test targets share: tools (ffmpeg, vips, python), fixtures, a local HTTP
        // server, a PostgreSQL server, moto's S3 server, worker processes, captured logs.
        .target(
            name: "PushPrepTestSupport",
            dependencies: [
                "PushPrepCore",
                "PushPrepQueue",
                "PushPrepStorage",
                Product.logging,
                Product.nioCore,
                Product.nioPosix,
                Product.nioHTTP1,
                Product.httpClient,
            ],
            path: "Tests/PushPrepTestSupport",
            swiftSettings: swiftSettings
        ),
    ]
        + [
            ("PushPrepCoreTests", ["PushPrepCore", "PushPrepJSON"]),
            ("PushPrepJSONTests", ["PushPrepJSON"]),
            ("PushPrepRemoteTests", ["PushPrepRemote", "PushPrepCore"]),
            ("PushPrepMediaTests", ["PushPrepMedia", "PushPrepCore", "CFFmpeg", "CVips"]),
            (
                "PushPrepPayloadTests",
                ["PushPrepPayload", "PushPrep", "PushPrepCore", "PushPrepJSON", "PushPrepRemote"]
            ),
            ("PushPrepTests", ["PushPrep", "PushPrepCore", "PushPrepMedia", "PushPrepQueue", "PushPrepRemote"]),
            ("PushPrepQueueTests", ["PushPrepQueue", "PushPrep", "PushPrepCore", "PushPrepRemote"]),
            ("PushPrepWorkerTests", ["PushPrepWorker", "PushPrepCore", "PushPrepQueue"]),
            ("PushPrepStorageTests", ["PushPrepStorage", "PushPrepCore"]),
            (
                "PushPrepServerTests",
                [
                    "PushPrepServer", "PushPrep", "PushPrepCore", "PushPrepJSON", "PushPrepPayload", "PushPrepQueue",
                    "PushPrepRemote", "PushPrepReport", "PushPrepWorker",
                    // `serve`'s composition (ServeServices), which InProcessServe runs.
                    "pushprep", "PushPrepCommandLine",
                ]
            ),
            ("PushPrepReportTests", ["PushPrepReport", "PushPrep", "PushPrepCore", "PushPrepPayload"]),
            ("PushPrepSandboxTests", ["PushPrepSandbox", "PushPrep", "PushPrepCore", "CSandboxShims"]),
        ].map { name, modules in
            // Each source target's tests, depending on the modules they import; those that drive the
            // CLI run the built `pushprep` binary (the support target finds it).
            .testTarget(
                name: name,
                dependencies: testDependencies(name, modules),
                swiftSettings: swiftSettings
            )
        }
)
