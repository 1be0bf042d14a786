#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a store's path names, its symbolic links followed: the name SQLite itself opens and
/// names its write-ahead log after (its unix file system layer follows links in every part of a
/// path). The store's journal is named from it, so an engine that opens the store by another
/// name (a link, a link to its folder) finds the journal a killed engine left, instead of an
/// empty one beside the link.
enum StorePath {
    /// Links are followed at most this many times (the system's own limit is 40).
    static let maxLinks = 40

    /// The absolute path `path` names with every link followed; a file not there yet is named
    /// inside its folder's real path; `":memory:"`, an empty path, or one whose folder cannot be
    /// resolved comes back as it was given.
    static func resolved(_ path: String) -> String {
        guard !path.isEmpty, path != ":memory:" else { return path }
        var current = path
        for _ in 0...maxLinks {
            if let real = realPath(current) { return real }
            // Not there (yet): a dangling link names its target, which SQLite makes.
            if let target = linkTarget(current) {
                current = target.hasPrefix("/") ? target : folder(of: current) + "/" + target
                continue
            }
            guard let dir = realPath(folder(of: current)) else { return path }
            return (dir == "/" ? "" : dir) + "/" + name(of: current)
        }
        return path
    }

    private static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }

    private static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
