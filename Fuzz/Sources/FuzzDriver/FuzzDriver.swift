@_spi(Fuzzing) import PushPrep

/// One libFuzzer input for the named ``FuzzEntry`` target: every input ends in a result or a
/// PushPrepError; anything else (a trap, a broken invariant, a sanitizer report) stops the process
/// and is the finding. Each `fuzz-<name>` executable exports `LLVMFuzzerTestOneInput` calling
/// this (built with `--sanitize=fuzzer`, SwiftPM compiles it as a library and libFuzzer supplies
/// `main`).
public func fuzzOne(_ target: String, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try FuzzEntry.run(target, bytes)
    } catch {
        _ = error.code
    }
    return 0
}
