import NIOPosix
public import PushPrepCore
import PushPrepMedia
public import PushPrepPayload
import PushPrepRemote

/// Reads an image's header with libvips (the image pipeline's header step, which refuses
/// nothing here: `maxPixels` is unbounded) on a thread that may block, never on the async
/// caller's.
public struct LibvipsImageInspector: ImageInspecting {
    public init() {}

    public func frames(ofImageAt path: String, type: MediaType) async -> ImageFrames? {
        try? await NIOThreadPool.singleton.runIfActive {
            try VipsRuntime.start()
            let header = try ImageHeaderStep.run(
                ImageInput(type: type, payload: .encoded(ImageSource(path: path))), maxPixels: .max)
            return ImageFrames(
                width: header.uprightWidth, height: header.uprightHeight,
                frames: header.isAnimated ? header.frames : 1)
        }
    }
}
