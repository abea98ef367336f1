/// One image to process: where its bytes are and what they are.
struct ImageInput {
    /// How libvips gets at the pixels.
    enum Payload {
        /// A file libvips decodes itself (every allow-listed loader).
        case file(String)
        /// A BMP's whole content, decoded by PushPrep (libvips has no BMP loader of its own).
        case bitmap([UInt8])
    }

    /// The detected type.
    let type: MediaType
    /// The bytes.
    let payload: Payload
}
