import Foundation
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// Movies and sounds: the FFmpeg pipelines write to a temporary file in the out directory,
/// which is renamed to its final, content-addressed name only when complete (and the job was
/// not stopped meanwhile). The pipelines' deadline observes the job's control, so a stop
/// interrupts libav within a packet or a blocking call.
extension InputProcessor {
    func processVideo(
        _ item: InputItem, file: InputFile, type: MediaType, warnings: [ProcessingWarning], admission: InputAdmission
    ) throws(PushPrepError) -> Attachment {
        let (builder, video, temporary) = try produce(
            .video, fingerprint: settings.videoFingerprint, item: item, file: file
        ) { temporary, deadline throws(PushPrepError) in
            try VideoPipeline.process(
                path: file.decodePath, settings: settings, outputPath: temporary, deadline: deadline,
                admit: admission.admit(postponing: deadline))
        }
        var input = InputInfo(
            type: type.rawValue, bytes: file.size, width: video.input?.video?.displayWidth,
            height: video.input?.video?.displayHeight, duration: video.input?.duration)
        input.videoCodec = video.input?.video?.codec
        input.audioCodec = video.input?.audio?.codec
        return try movieAttachment(
            builder, temporary: temporary, video: video, input: input, operations: video.operations,
            warnings: warnings, sourceSHA256: file.sha256, fingerprint: settings.videoFingerprint)
    }

    func processAnimationAsVideo(
        _ item: InputItem, file: InputFile, image: ImageInput, header: ImageHeader, reason: String,
        warnings: [ProcessingWarning]
    ) throws(PushPrepError) -> Attachment {
        let (builder, video, temporary) = try produce(
            .video, fingerprint: settings.animationVideoFingerprint, item: item, file: file
        ) { temporary, deadline throws(PushPrepError) in
            let animation = try AnimationFrames.decode(
                image, header: header, width: settings.videoWidth, maxPixels: settings.maxPixels)
            try deadline.check("decoding the animation")
            return try AnimationVideoEncoder.encode(
                frames: animation.frames, width: animation.width, height: animation.height, bands: 3,
                delays: animation.delays, settings: settings, outputPath: temporary, deadline: deadline)
        }
        let input = InputInfo(
            type: image.type.rawValue, bytes: file.size, width: header.uprightWidth, height: header.uprightHeight,
            duration: nil)
        let decoded =
            "decoded \(image.type.rawValue) \(header.uprightWidth)x\(header.uprightHeight), \(header.frames) frames"
        return try movieAttachment(
            builder, temporary: temporary, video: video, input: input, operations: [decoded] + video.operations,
            warnings: warnings + [ProcessingWarning.animationSentAsMovie(reason: reason)],
            sourceSHA256: file.sha256, fingerprint: settings.animationVideoFingerprint)
    }

    private func movieAttachment(
        _ builder: AttachmentBuilder, temporary: String, video: ProcessedVideo, input: InputInfo,
        operations: [String], warnings: [ProcessingWarning], sourceSHA256: String, fingerprint: String
    ) throws(PushPrepError) -> Attachment {
        var builder = builder
        builder.operations = operations
        let output = try builder.commit(temporary, as: .mp4)
        let poster = try video.poster.map { frame throws(PushPrepError) in
            try builder.writePoster(frame.jpeg, width: frame.width, height: frame.height)
        }
        var renditions = Renditions()
        var renditionWarnings: [ProcessingWarning] = []
        let specs = RenditionSpec.specs(for: settings)
        if let poster, !specs.isEmpty {
            // The platforms see the frame iOS shows as the thumbnail: the poster, cropped.
            try control?.check()
            let outcome = try posterRenditions(poster, specs: specs)
            renditionWarnings = outcome.warnings
            let source = (width: input.width ?? poster.width, height: input.height ?? poster.height)
            renditions = try builder.writeRenditions(
                outcome, sourceSHA256: sourceSHA256, fingerprint: fingerprint, settings: settings,
                poster: (poster.width, poster.height), source: source)
        }
        return builder.attachment(
            output, picture: .init(width: video.width, height: video.height, frames: video.frames),
            duration: video.duration, input: input, warnings: warnings + video.warnings + renditionWarnings,
            thumbnailTime: video.thumbnailTime, poster: poster, renditions: renditions)
    }

    /// The renditions of a movie's poster, read back from the out directory.
    private func posterRenditions(_ poster: Attachment.Poster, specs: [RenditionSpec]) throws(PushPrepError)
        -> RenditionOutcome
    {
        let file = try InputFile.read(path: "\(outputDirectory)/\(poster.file)", maxBytes: AppleLimits.imageBytes)
        let image = ImageInput(type: .jpeg, payload: .encoded(try ImageSource(descriptor: file.descriptor)))
        return try RenditionStep.make(from: image, specs: specs, maxPixels: settings.maxPixels)
    }

    func processAudio(
        _ item: InputItem, file: InputFile, type: MediaType, warnings: [ProcessingWarning], admission: InputAdmission
    ) throws(PushPrepError) -> Attachment {
        // The extension depends on the path taken (an MP3 may be copied): the output's type is
        // known once the pipeline is done.
        var (builder, audio, temporary) = try produce(
            .audio, fingerprint: settings.audioFingerprint, item: item, file: file
        ) { temporary, deadline throws(PushPrepError) in
            try AudioPipeline.process(
                path: file.decodePath, type: type, settings: settings, outputPath: temporary, deadline: deadline,
                admit: admission.admit(postponing: deadline))
        }
        builder.operations = audio.operations
        let output = try builder.commit(temporary, as: audio.format)
        var input = InputInfo(
            type: type.rawValue, bytes: file.size, width: nil, height: nil, duration: audio.input.duration)
        input.audioCodec = audio.input.audio?.codec
        return builder.attachment(
            output, picture: .none, duration: audio.duration, input: input, warnings: warnings + audio.warnings)
    }

    /// Runs a pipeline that writes the output of `kind` itself, into a temporary beside its final
    /// name, under the job's deadline; a failure or a stop (checked once more when it returns)
    /// leaves no temporary. Returns the attachment's builder, the pipeline's result and the
    /// temporary to commit.
    private func produce<Result>(
        _ kind: MediaKind, fingerprint: String, item: InputItem, file: InputFile,
        _ pipeline: (_ temporary: String, _ deadline: MediaDeadline) throws(PushPrepError) -> Result
    ) throws(PushPrepError) -> (AttachmentBuilder, Result, String) {
        let id = AttachmentID.make(kind: kind, sourceSHA256: file.sha256, fingerprint: fingerprint)
        let builder = builder(id: id, kind: kind, item: item)
        let deadline = MediaDeadline(seconds: settings.timeout, control: control)
        let (result, temporary) = try builder.withTemporary { temporary throws(PushPrepError) in
            let result = try pipeline(temporary, deadline)
            try control?.check()
            return result
        }
        return (builder, result, temporary)
    }

    /// The builder of this processor's attachment of `kind` with this id.
    func builder(id: String, kind: MediaKind, item: InputItem) -> AttachmentBuilder {
        AttachmentBuilder(id: id, kind: kind, item: item, outputDirectory: outputDirectory, settings: settings)
    }
}
