// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets, one small executable each, outside the main package so that its normal
// build never sees them (an executable whose only entry is LLVMFuzzerTestOneInput links only
// with libFuzzer's main). Built by `make fuzz`:
//   swift build --package-path Fuzz --scratch-path .build-fuzz -c debug \
//       --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
// SwiftPM's --sanitize instruments the C targets too (the shims' custom I/O) and, for the
// fuzzer, compiles executables as libraries so that libFuzzer's main is the entry; but it hands
// swift-frontend the two sanitizers as separate flags, of which only address took effect (Swift
// code had no coverage and libFuzzer found nothing new), hence the combined -Xswiftc flag.
// Each target calls one `FuzzEntry` function of the library, the one the regression test
// (Tests/PushPrepTests/FuzzRegressionTests.swift) replays Tests/FuzzCorpus/<name> through.

let names = ["detect", "bmp", "json", "url", "settings", "demux"]

let package = Package(
    name: "PushPrepFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "PushPrep", path: "..")],
    targets: [
        .target(name: "FuzzDriver", dependencies: [.product(name: "PushPrep", package: "PushPrep")])
    ]
        + names.map { name in
            .executableTarget(
                name: "fuzz-\(name)",
                dependencies: ["FuzzDriver", .product(name: "PushPrep", package: "PushPrep")],
                path: "Sources/fuzz-\(name)"
            )
        }
)
