import Foundation

/// Movies and sounds: the FFmpeg pipelines write to a temporary file in the out directory,
/// which is renamed to its final, content-addressed name only when complete (and the job was
/// not stopped meanwhile). The pipelines' deadline observes the job's control, so a stop
/// interrupts libav within a packet or a blocking call.
extension InputProcessor {
    func processVideo(_ item: InputItem, file: InputFile, type: MediaType, warnings: [String]) throws(PushPrepError)
        -> Attachment
    {
        let id = AttachmentID.make(kind: .video, sourceSHA256: file.sha256, fingerprint: settings.videoFingerprint)
        let name = "\(id).\(MediaType.mp4.fileExtension)"
        let temporary = AtomicFile.temporaryPath(for: "\(outputDirectory)/\(name)")
        let deadline = MediaDeadline(seconds: settings.timeout, control: control)
        let video: ProcessedVideo
        do throws(PushPrepError) {
            video = try VideoPipeline.process(
                path: file.decodePath, settings: settings, outputPath: temporary, deadline: deadline)
            try control?.check()
        } catch {
            unlink(temporary)
            throw error
        }
        var input = InputInfo(
            type: type.rawValue, bytes: file.size, width: video.input?.video?.displayWidth,
            height: video.input?.video?.displayHeight, duration: video.input?.duration)
        input.videoCodec = video.input?.video?.codec
        input.audioCodec = video.input?.audio?.codec
        return try movieAttachment(
            item, id: id, name: name, temporary: temporary, video: video, input: input,
            operations: video.operations, warnings: warnings)
    }

    func processAnimationAsVideo(
        _ item: InputItem, file: InputFile, image: ImageInput, header: ImageHeader, reason: String,
        warnings: [String]
    ) throws(PushPrepError) -> Attachment {
        let id = AttachmentID.make(
            kind: .video, sourceSHA256: file.sha256, fingerprint: settings.animationVideoFingerprint)
        let name = "\(id).\(MediaType.mp4.fileExtension)"
        let temporary = AtomicFile.temporaryPath(for: "\(outputDirectory)/\(name)")
        let deadline = MediaDeadline(seconds: settings.timeout, control: control)
        let video: ProcessedVideo
        do throws(PushPrepError) {
            let animation = try AnimationFrames.decode(
                image, header: header, width: settings.videoWidth, maxPixels: settings.maxPixels)
            try deadline.check("decoding the animation")
            video = try AnimationVideoEncoder.encode(
                frames: animation.frames, width: animation.width, height: animation.height, bands: 3,
                delays: animation.delays, settings: settings, outputPath: temporary, deadline: deadline)
            try control?.check()
        } catch {
            unlink(temporary)
            throw error
        }
        let input = InputInfo(
            type: image.type.rawValue, bytes: file.size, width: header.uprightWidth, height: header.uprightHeight,
            duration: nil)
        let decoded =
            "decoded \(image.type.rawValue) \(header.uprightWidth)x\(header.uprightHeight), \(header.frames) frames"
        return try movieAttachment(
            item, id: id, name: name, temporary: temporary, video: video, input: input,
            operations: [decoded] + video.operations, warnings: warnings + ["sent as a silent MP4 movie: \(reason)"])
    }

    private func movieAttachment(
        _ item: InputItem, id: String, name: String, temporary: String, video: ProcessedVideo, input: InputInfo,
        operations: [String], warnings: [String]
    ) throws(PushPrepError) -> Attachment {
        var operations = operations
        let output = try commit(temporary, name: name, operations: &operations)
        var poster: Attachment.Poster?
        if let frame = video.poster {
            let posterName = "\(id)-poster.jpg"
            try AtomicFile.write(frame.jpeg, to: "\(outputDirectory)/\(posterName)")
            poster = Attachment.Poster(file: posterName, width: frame.width, height: frame.height)
        }
        return Attachment(
            id: id,
            source: item.source,
            kind: .video,
            file: name,
            url: settings.baseURL.map { URLJoin.join($0, name) },
            uti: MediaType.mp4.uti,
            mime: MediaType.mp4.mime,
            bytes: output.size,
            sha256: output.sha256,
            width: video.width,
            height: video.height,
            duration: video.duration,
            frames: video.frames,
            options: AttachmentOptions(typeHint: MediaType.mp4.uti, thumbnailTime: video.thumbnailTime),
            input: input,
            operations: operations,
            warnings: warnings + video.warnings,
            poster: poster
        )
    }

    func processAudio(_ item: InputItem, file: InputFile, type: MediaType, warnings: [String]) throws(PushPrepError)
        -> Attachment
    {
        let id = AttachmentID.make(kind: .audio, sourceSHA256: file.sha256, fingerprint: settings.audioFingerprint)
        // The extension depends on the path taken (an MP3 may be copied), so the pipeline writes
        // to a neutral temporary name and the final name is chosen afterwards.
        let temporary = AtomicFile.temporaryPath(for: "\(outputDirectory)/\(id).audio")
        let deadline = MediaDeadline(seconds: settings.timeout, control: control)
        let audio: ProcessedAudio
        do throws(PushPrepError) {
            audio = try AudioPipeline.process(
                path: file.decodePath, type: type, settings: settings, outputPath: temporary, deadline: deadline)
            try control?.check()
        } catch {
            unlink(temporary)
            throw error
        }
        let name = "\(id).\(audio.format.fileExtension)"
        var operations = audio.operations
        let output = try commit(temporary, name: name, operations: &operations)
        var input = InputInfo(
            type: type.rawValue, bytes: file.size, width: nil, height: nil, duration: audio.input.duration)
        input.audioCodec = audio.input.audio?.codec
        return Attachment(
            id: id,
            source: item.source,
            kind: .audio,
            file: name,
            url: settings.baseURL.map { URLJoin.join($0, name) },
            uti: audio.format.uti,
            mime: audio.format.mime,
            bytes: output.size,
            sha256: output.sha256,
            width: nil,
            height: nil,
            duration: audio.duration,
            frames: nil,
            options: AttachmentOptions(typeHint: audio.format.uti),
            input: input,
            operations: operations,
            warnings: warnings + audio.warnings,
            poster: nil
        )
    }

    /// Renames a finished temporary output to `name` and hashes it.
    private func commit(_ temporary: String, name: String, operations: inout [String]) throws(PushPrepError)
        -> InputFile
    {
        let path = "\(outputDirectory)/\(name)"
        let (outcome, output) = try AtomicFile.commit(temporary, to: path)
        switch outcome {
        case .written: operations.append("wrote \(name)")
        case .reused: operations.append("reused identical existing output \(name)")
        }
        return output
    }
}
