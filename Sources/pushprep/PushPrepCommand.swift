import ArgumentParser
import PushPrep

@main
struct PushPrepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushprep",
        abstract: "Prepare images, video and audio as iOS rich-notification attachments.",
        discussion: """
            PushPrep detects each input's real type from its bytes, resizes and re-encodes it so \
            that the phone shows it (right type, right extension, under Apple's size limits), and \
            writes a manifest with everything a push payload needs.

            Examples:
              pushprep process photos/ --out out --base-url https://cdn.example.com/push
              pushprep inspect banner.webp
            """,
        version: PushPrepVersion.current,
        subcommands: [ProcessCommand.self, InspectCommand.self]
    )
}
