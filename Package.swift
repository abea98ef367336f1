// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "PushPrep",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushprep", targets: ["pushprep"]),
        .library(name: "PushPrep", targets: ["PushPrep"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
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
        .target(
            name: "PushPrep",
            dependencies: [
                "CVips",
                "CVipsShims",
                "CFFmpeg",
                "CFFmpegShims",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pushprep",
            dependencies: [
                "PushPrep",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushPrepTests",
            dependencies: [
                "PushPrep",
                "CVips",
                "CVipsShims",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
