import Foundation
import SystemPackage

// The one mapping from a failed system call to a PushPrepError: what failed, said by the
// caller ("cannot write /out/img-1.jpg"), and the system's reason ("No space left on device").

extension PushPrepError {
    /// `what` failed with `errno`. A missing file or directory (ENOENT, ENOTDIR) is `missing`
    /// when given (`not_found` for an input), else `code`.
    init(_ what: String, errno: Errno, code: Code = .ioError, missing: Code? = nil) {
        if let missing, errno == .noSuchFileOrDirectory || errno == .notDirectory {
            self.init(missing, "\(what): \(errno.description)", cause: errno)
        } else {
            self.init(code, "\(what): \(errno.description)", cause: errno)
        }
    }

    /// `what` failed; the reason is the calling thread's `errno`, read now.
    package static func system(_ what: String, code: Code = .ioError, missing: Code? = nil) -> PushPrepError {
        PushPrepError(what, errno: Errno(rawValue: Foundation.errno), code: code, missing: missing)
    }
}

/// Runs swift-system calls and reports their failure as ``PushPrepError``: `what` failed,
/// with the system's reason.
package func systemCall<T>(
    _ what: @autoclosure () -> String, code: PushPrepError.Code = .ioError, missing: PushPrepError.Code? = nil,
    _ body: () throws -> T
) throws(PushPrepError) -> T {
    do {
        return try body()
    } catch let error as Errno {
        throw PushPrepError(what(), errno: error, code: code, missing: missing)
    } catch {
        throw PushPrepError(code, "\(what()): \(error)")
    }
}

extension FileDescriptor {
    /// Flushes the file's data to the device (`fsync`), as a file is before it is renamed into
    /// place. swift-system has no call for it.
    func sync() throws(Errno) {
        while fsync(rawValue) != 0 {
            let number = Foundation.errno
            if number != EINTR { throw Errno(rawValue: number) }
        }
    }
}

/// Renames `from` to `to` (`rename(2)`: atomic on one file system, replacing `to`).
func renameFile(_ from: String, to: String) throws(PushPrepError) {
    guard rename(from, to) == 0 else { throw .system("cannot rename to \(to)") }
}
