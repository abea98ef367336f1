package import Foundation
package import Logging

/// What the reference program `vipsheader -a` says about an image file: an independent check
/// of PushPrep's outputs (it is libvips, but not PushPrep's code path).
package struct ImageProbe {
    package let fields: [String: String]

    package var width: Int { Int(fields["width"] ?? "") ?? -1 }
    package var height: Int { Int(fields["height"] ?? "") ?? -1 }
    package var interpretation: String { fields["interpretation"] ?? "" }
    package var loader: String { fields["vips-loader"] ?? "" }
    package var bands: Int { Int(fields["bands"] ?? "") ?? -1 }
    package var pages: Int { Int(fields["n-pages"] ?? "") ?? 1 }
    package var pageHeight: Int { Int(fields["page-height"] ?? "") ?? height }
    package var hasEXIF: Bool { fields["exif-data"] != nil || fields.keys.contains { $0.hasPrefix("exif-ifd") } }
    package var hasGPS: Bool { fields.keys.contains { $0.hasPrefix("exif-ifd3") } }
    package var hasXMP: Bool { fields["xmp-data"] != nil }
    package var hasIPTC: Bool { fields["iptc-data"] != nil }
    package var hasICC: Bool { fields["icc-profile-data"] != nil }
    package var orientation: Int { Int((fields["orientation"] ?? "1").prefix(1)) ?? 1 }

    /// Probes a file with `vipsheader -a` (header of every page with `n=-1` for animations).
    package static func probe(_ url: URL, allPages: Bool = false) throws -> ImageProbe {
        let target = allPages ? url.path + "[n=-1]" : url.path
        let result = try TestTools.run("vipsheader", ["-a", target])
        guard result.status == 0 else {
            throw ProbeError(message: String(decoding: result.stderr, as: UTF8.self))
        }
        var fields: [String: String] = [:]
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[key] = value
        }
        return ImageProbe(fields: fields)
    }

    /// Decodes every pixel (`vips avg`), which fails on a truncated or damaged file.
    package static func decodesFully(_ url: URL) -> Bool {
        (try? TestTools.run("vips", ["avg", url.path]).status) == 0
    }

    /// Mean absolute difference of two images of the same size (0...255), by the `vips` program.
    package static func meanDifference(_ a: URL, _ b: URL, scratch: URL) throws -> Double {
        try absoluteDifference(a, b, scratch: scratch, statistic: "avg")
    }

    /// Largest absolute difference of two images of the same size over every pixel and band
    /// (0...255), by the `vips` program.
    package static func maxDifference(_ a: URL, _ b: URL, scratch: URL) throws -> Double {
        try absoluteDifference(a, b, scratch: scratch, statistic: "max")
    }

    /// `vips <statistic>` (`avg`, `max`) of `|a - b|`, through temporaries in `scratch`.
    private static func absoluteDifference(_ a: URL, _ b: URL, scratch: URL, statistic: String) throws -> Double {
        let difference = scratch.appendingPathComponent("diff-\(UUID().uuidString).v")
        let absolute = scratch.appendingPathComponent("abs-\(UUID().uuidString).v")
        defer {
            try? FileManager.default.removeItem(at: difference)
            try? FileManager.default.removeItem(at: absolute)
        }
        try TestTools.vips("subtract", a.path, b.path, difference.path)
        try TestTools.vips("abs", difference.path, absolute.path)
        let result = try TestTools.run("vips", [statistic, absolute.path])
        return Double(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? .infinity
    }

    struct ProbeError: Error { let message: String }
}

extension Logger {
    /// A logger that drops everything: tests assert on results, not on log lines.
    package static let quiet = Logger(label: "pushprep.tests", factory: { _ in SwiftLogNoOpLogHandler() })
}
