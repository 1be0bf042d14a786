import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` while this process may make no file larger than `bytes` (`RLIMIT_FSIZE`, with
/// `SIGXFSZ` ignored so that a write past it fails with `EFBIG`, or is cut short at it, instead of
/// ending the process): a full disk, at a moment the test chooses. Both are put back after.
func withFileSizeLimit<T>(_ bytes: Int, _ body: () throws -> T) rethrows -> T {
    var saved = rlimit()
    getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
    let oldHandler = signal(SIGXFSZ, SIG_IGN)
    var limited = rlimit(rlim_cur: rlim_t(bytes), rlim_max: saved.rlim_max)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited)
    defer {
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        signal(SIGXFSZ, oldHandler)
    }
    return try body()
}
