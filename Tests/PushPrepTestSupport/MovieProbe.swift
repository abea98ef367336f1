import Foundation
package import Testing

/// What the reference program `ffprobe` says about a movie, plus the MP4's top-level boxes
/// read from the bytes: an independent check of PushPrep's video outputs.
package struct MovieProbe {
    package let streams: [[String: Any]]
    let format: [String: Any]
    /// Top-level box types in file order, e.g. ["ftyp", "moov", "mdat"].
    let boxes: [String]
    package let bytes: Int

    package static func probe(_ path: String) throws -> MovieProbe {
        let output = try TestTools.runChecked(
            "ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: output) as? [String: Any] ?? [:]
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return MovieProbe(
            streams: json["streams"] as? [[String: Any]] ?? [], format: json["format"] as? [String: Any] ?? [:],
            boxes: topLevelBoxes(data), bytes: data.count)
    }

    /// Walks the top-level ISO BMFF boxes (32-bit sizes, 64-bit `largesize`, 0 = to the end).
    static func topLevelBoxes(_ data: Data) -> [String] {
        let bytes = [UInt8](data)
        var boxes: [String] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    package var video: [String: Any]? { streams.first { $0["codec_type"] as? String == "video" } }
    package var audio: [String: Any]? { streams.first { $0["codec_type"] as? String == "audio" } }
    package var duration: Double { Double(format["duration"] as? String ?? "") ?? -1 }
    package var width: Int { video?["width"] as? Int ?? -1 }
    package var height: Int { video?["height"] as? Int ?? -1 }
    /// The display matrix rotation as ffprobe prints it (0 when there is none).
    package var rotation: Int {
        let list = video?["side_data_list"] as? [[String: Any]] ?? []
        return list.compactMap { $0["rotation"] as? Int }.first ?? 0
    }
    /// Average frames per second of the video.
    package var frameRate: Double {
        let parts = (video?["avg_frame_rate"] as? String ?? "0/1").split(separator: "/").compactMap { Double($0) }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : 0
    }
    package var frames: Int { Int(video?["nb_frames"] as? String ?? "") ?? -1 }

    /// The checks every preview must pass: H.264 High or lower (or HEVC tagged hvc1 when
    /// `allowHEVC`), yuv420p, even dimensions, square pixels, `moov` before `mdat`, the
    /// duration within 0.5 s of `duration`, at most `maxBytes`, at most `maxFrameRate` fps,
    /// AAC-LC audio if any.
    package func expectPlayable(
        duration expected: Double, maxBytes: Int = 50_000_000, maxFrameRate: Double = 30.01, allowHEVC: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let video = self.video ?? [:]
        let codec = video["codec_name"] as? String ?? ""
        let profile = video["profile"] as? String ?? ""
        if allowHEVC && codec == "hevc" {
            #expect(video["codec_tag_string"] as? String == "hvc1", sourceLocation: sourceLocation)
            #expect(profile == "Main", "HEVC profile \(profile)", sourceLocation: sourceLocation)
        } else {
            #expect(codec == "h264", "codec \(codec)", sourceLocation: sourceLocation)
            #expect(
                ["High", "Main", "Baseline", "Constrained Baseline"].contains(profile), "profile \(profile)",
                sourceLocation: sourceLocation)
            #expect(
                (video["level"] as? Int ?? 99) <= 42, "level \(video["level"] ?? "?")", sourceLocation: sourceLocation)
        }
        #expect(
            video["pix_fmt"] as? String == "yuv420p", "pix_fmt \(video["pix_fmt"] ?? "?")",
            sourceLocation: sourceLocation)
        #expect(
            width > 0 && width % 2 == 0 && height > 0 && height % 2 == 0, "\(width)x\(height)",
            sourceLocation: sourceLocation)
        let aspect = video["sample_aspect_ratio"] as? String
        #expect(
            aspect == nil || aspect == "1:1" || aspect == "0:1", "SAR \(aspect ?? "")", sourceLocation: sourceLocation)
        let moov = boxes.firstIndex(of: "moov")
        let mdat = boxes.firstIndex(of: "mdat")
        #expect(moov != nil && mdat != nil && moov! < mdat!, "boxes \(boxes)", sourceLocation: sourceLocation)
        #expect(
            abs(duration - expected) <= 0.5, "duration \(duration), expected \(expected)",
            sourceLocation: sourceLocation)
        #expect(bytes <= maxBytes, "\(bytes) bytes, limit \(maxBytes)", sourceLocation: sourceLocation)
        #expect(frameRate <= maxFrameRate, "frame rate \(frameRate)", sourceLocation: sourceLocation)
        if let audio {
            #expect(audio["codec_name"] as? String == "aac", sourceLocation: sourceLocation)
            #expect(audio["profile"] as? String == "LC", sourceLocation: sourceLocation)
        }
    }
}
