import ArgumentParser
import PushPrepCore

/// `--manifest-version`, shared by `process` and `jobs show --manifest`: the manifest format to
/// write. 2, the default, writes warnings as text, as every earlier PushPrep did; 3 writes each
/// as `{code, message}` (``AttachmentWarning``). Both read back, as does version 1.
struct ManifestVersionOption: ParsableArguments {
    @Option(
        name: .customLong("manifest-version"),
        help: ArgumentHelp(
            "The manifest format to write: \(Manifest.currentVersion) (warnings as text, the default) or "
                + "\(Manifest.structuredVersion) (each warning as {code, message}).",
            valueName: "version"))
    var version: Int = Manifest.currentVersion

    func validate() throws {
        guard Manifest.writableVersions.contains(version) else {
            throw ValidationError(
                "--manifest-version must be \(Manifest.writableVersions.map(String.init).joined(separator: " or ")),"
                    + " got \(version)")
        }
    }

    /// Whether it was given another version than the default.
    var isGiven: Bool { version != Manifest.currentVersion }
}
