// The vocabulary of PushPrep's API (settings, the manifest, errors, remote settings) comes with
// `import PushPrep`; pre-flight and payloads are `import PushPrepPayload`.
@_exported public import PushPrepCore
@_exported public import PushPrepRemote
