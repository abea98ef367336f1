internal import CFFmpeg
internal import CFFmpegShims
package import PushPrepCore

/// What an opened media file holds, from its headers: the facts the pipelines decide on
/// (copy or transcode) and the manifest reports.
package struct MediaProbe {
    /// The demuxer, e.g. "mov,mp4,m4a,3gp,3g2,mj2".
    let container: String
    /// Seconds, when known.
    package let duration: Double?
    /// The main video stream (cover art excluded).
    package let video: VideoStreamInfo?
    /// The main audio stream.
    package let audio: AudioStreamInfo?
    /// All streams in the file.
    package let streamCount: Int

    package init(_ input: MediaInput) {
        container = input.formatName
        duration = input.duration
        streamCount = input.streams.count
        video = input.bestStream(AVMEDIA_TYPE_VIDEO).map(VideoStreamInfo.init)
        audio = input.bestStream(AVMEDIA_TYPE_AUDIO).map(AudioStreamInfo.init)
    }

    /// Whether the container is MP4/MOV (the only ones whose streams can be copied as is).
    package var isMP4Family: Bool { container.hasPrefix("mov,mp4") }
}

/// What libav says of every stream alike: where it stands in the file, its codec and its
/// profile. A video or audio stream's parameters read these through dynamic members
/// (`video.codec`, `audio.profileID`).
package struct StreamCodec {
    let index: Int
    let codecID: AVCodecID
    /// e.g. "h264", "hevc", "vp9", "aac", "mp3", "opus".
    package let codec: String
    /// e.g. "High", "Main 10", "LC", "HE-AAC", when known.
    package let profile: String?
    let profileID: Int32

    init(_ stream: UnsafeMutablePointer<AVStream>) {
        let p = stream.pointee.codecpar.pointee
        index = Int(stream.pointee.index)
        codecID = p.codec_id
        codec = String(cString: avcodec_get_name(p.codec_id))
        profile = avcodec_profile_name(p.codec_id, p.profile).map { String(cString: $0) }
        profileID = p.profile
    }
}

/// A video stream's parameters.
@dynamicMemberLookup
package struct VideoStreamInfo {
    /// Level × 10 for H.264 (42 = 4.2), × 30 for HEVC, as libav reports it.
    let level: Int32
    /// Stored (coded) size, before rotation.
    package let width: Int
    package let height: Int
    /// e.g. "yuv420p", "yuv420p10le".
    package let pixelFormat: String
    let bitDepth: Int
    /// Whether chroma is subsampled 2x2 (4:2:0).
    let is420: Bool
    /// Frames per second (average), when known.
    package let frameRate: Double?
    /// Display rotation in degrees, normalised to 0, 90, 180 or 270 clockwise.
    package let rotation: Int
    /// Whether pixels are square (sample aspect ratio 1:1 or unset).
    let squarePixels: Bool
    /// The container's four-character code, e.g. "avc1", "hvc1", "hev1".
    let tag: String
    /// Its index, codec and profile.
    let stream: StreamCodec

    init(_ stream: UnsafeMutablePointer<AVStream>) {
        let p = stream.pointee.codecpar.pointee
        self.stream = StreamCodec(stream)
        level = p.level
        width = Int(p.width)
        height = Int(p.height)
        let format = AVPixelFormat(rawValue: p.format)
        pixelFormat = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown"
        if let descriptor = av_pix_fmt_desc_get(format) {
            bitDepth = Int(descriptor.pointee.comp.0.depth)
            is420 = descriptor.pointee.log2_chroma_w == 1 && descriptor.pointee.log2_chroma_h == 1
        } else {
            bitDepth = 8
            is420 = false
        }
        let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        frameRate = rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : nil
        // av_display_rotation_get is counter-clockwise; phones record 90 for portrait as -90.
        let degrees = -cffmpegshims_stream_rotation(stream)
        rotation = ((Int(degrees.rounded()) % 360) + 360) % 360
        let aspect = p.sample_aspect_ratio
        squarePixels = aspect.num == 0 || aspect.num == aspect.den
        let t = p.codec_tag
        tag = String(
            decoding: [UInt8(t & 0xFF), UInt8((t >> 8) & 0xFF), UInt8((t >> 16) & 0xFF), UInt8((t >> 24) & 0xFF)],
            as: UTF8.self)
    }

    /// Width and height as displayed (rotation applied).
    package var displayWidth: Int { rotation % 180 == 0 ? width : height }
    package var displayHeight: Int { rotation % 180 == 0 ? height : width }

    /// The stream's index, codec and profile, as `info.codec`, `info.profile`, ….
    package subscript<Value>(dynamicMember keyPath: KeyPath<StreamCodec, Value>) -> Value {
        stream[keyPath: keyPath]
    }

    /// Refuses a stream without a frame size or with more pixels than `maxPixels`: what
    /// `process` refuses and `inspect` reports.
    package func checkFrameSize(maxPixels: Int) throws(PushPrepError) {
        guard width > 0, height > 0 else {
            throw PushPrepError(.corruptInput, "the video stream has no frames PushPrep can read (no frame size)")
        }
        guard width * height <= maxPixels else {
            throw PushPrepError(.tooManyPixels, "\(width)x\(height) video, more than the \(maxPixels) pixels allowed")
        }
    }
}

/// An audio stream's parameters.
@dynamicMemberLookup
package struct AudioStreamInfo {
    /// "mono", "stereo" or "N channels", for operations and reports.
    package static func channelsText(_ channels: Int) -> String {
        switch channels {
        case 1: "mono"
        case 2: "stereo"
        default: "\(channels) channels"
        }
    }

    /// Its index, codec and profile.
    let stream: StreamCodec
    package let sampleRate: Int
    package let channels: Int
    /// Bits per second, when known.
    package let bitRate: Int?

    init(_ stream: UnsafeMutablePointer<AVStream>) {
        let p = stream.pointee.codecpar.pointee
        self.stream = StreamCodec(stream)
        sampleRate = Int(p.sample_rate)
        channels = Int(cffmpegshims_channels(stream.pointee.codecpar))
        bitRate = p.bit_rate > 0 ? Int(p.bit_rate) : nil
    }

    /// The stream's index, codec and profile, as `info.codec`, `info.profile`, ….
    package subscript<Value>(dynamicMember keyPath: KeyPath<StreamCodec, Value>) -> Value {
        stream[keyPath: keyPath]
    }

    /// AAC Low Complexity, the profile every iPhone decodes.
    var isAACLC: Bool {
        stream.codecID == AV_CODEC_ID_AAC
            && (stream.profileID == FF_PROFILE_AAC_LOW || stream.profileID == FF_PROFILE_UNKNOWN)
    }
}
