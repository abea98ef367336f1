import ArgumentParser
import Foundation
import PushPrepCore

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
              pushprep payload out/manifest.json --title Hello --body "A new photo"
              pushprep preflight payload.json --fetch
              pushprep enqueue uploads/ && pushprep worker --out out
              pushprep jobs list --state failed
              pushprep sandbox-check
            """,
        version: PushPrepVersion.current,
        subcommands: [
            ProcessCommand.self, InspectCommand.self, PayloadCommand.self, PreflightCommand.self, EnqueueCommand.self,
            WorkerCommand.self, JobsCommand.self, ServeCommand.self, SandboxCheckCommand.self, DecoderCommand.self,
        ]
    )

    /// The entry point. Like ArgumentParser's own `main()`, except that usage errors exit with
    /// status 2 (the documented contract) instead of ArgumentParser's default 64 (EX_USAGE).
    /// Help and `--version` still exit 0; other errors keep ArgumentParser's handling. A usage
    /// error found while running (a file that cannot be read) prints its message alone: the
    /// root command's usage would not be the one that applies.
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ValidationError {
            FileHandle.standardError.write(Data("Error: \(error.message)\n".utf8))
            exit(withError: ExitCode(2))
        } catch {
            exit(withError: error)
        }
    }
}
