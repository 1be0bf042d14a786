#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The journal's file beside the store's (`<store>-wfjournal`): an append-only log, one record
/// per journaled commit holding the commit's row images (``JournalCoding``). Appending a record
/// is one `pwrite` (and an `fdatasync` with ``Durability/full``): what a call waits for before it
/// returns, instead of a SQLite transaction.
///
/// A file of its own, beside the SQLite file, so that appending never waits for the folder
/// writing the store's tables (SQLite lets one connection write a file at a time). The two stay
/// consistent through the store's meta, written in the transactions that change the tables:
/// `journal.foldedThrough`, the last entry whose rows are in the tables (opening replays the
/// entries after it), and `journal.directCommits`, how many commits were written straight to the
/// tables (each entry carries the count it was appended after). After a power loss (with
/// `synchronous=NORMAL` each file may lose its last writes, separately), entries appended after
/// a commit written straight to the tables that the store lost are not replayed: the store comes
/// back as it was before that commit, never with a hole.
///
/// Layout: a 64-byte header (``magic``; the store's id, so that a journal left beside a store
/// that was deleted and made again is never replayed into the new one; and the token of the
/// engine that owns it), then records of a 24-byte head (payload length, a zero word, entry
/// number, checksum) and the payload. Entry numbers follow each other by one; reading stops at
/// the first record that is cut short, fails its checksum or breaks the sequence, so what a kill
/// or a power loss left half-written is never read. Once every entry in the file is in the
/// tables and on disk, the next append empties the file first.
///
/// One engine at a time appends: opening takes the file over under an exclusive `flock`, reads
/// it, empties it and writes its own token into the header; every append holds a shared `flock`
/// and checks that the header still holds its token, so an engine that opened the store earlier
/// is refused (`storeInUse`) instead of appending where nobody reads.
package final class JournalFile {
    /// Beside the file the store's path names once its symbolic links are followed, as SQLite
    /// names its write-ahead log: a store opened by another name (a link) finds the same journal.
    package static func path(forStore path: String) -> String { StorePath.resolved(path) + "-wfjournal" }

    /// An earlier version named the journal after the store's path as given: for a path that is
    /// a link to the store's file, it lies beside the link. Moved to the name it has now (one
    /// rename, so an engine appending to it meanwhile goes on appending to the same file), unless
    /// a journal has that name already: a killed engine's commits in it are replayed, not lost.
    static func adoptOldName(forStore path: String) {
        let old = path + "-wfjournal"
        let now = Self.path(forStore: path)
        guard old != now, FileManager.default.fileExists(atPath: old), !FileManager.default.fileExists(atPath: now) else {
            return
        }
        _ = rename(old, now)  // a failure leaves it where it was, as before
    }

    static let magic: [UInt8] = Array("WFJOURNAL\u{0}1\u{0}".utf8)  // 12 bytes: name, format 1
    static let headerSize = 64
    /// Where the store's id and the owner's token are in the header, and their sizes.
    static let idOffset = 12
    static let idSize = 36
    static let tokenOffset = 48
    static let tokenSize = 16
    static let recordHead = 24

    private let path: String
    private let storePath: String
    private let durability: Durability
    private var fd: Int32 = -1
    /// Held from opening until ``begin(durable:)``.
    private var exclusive = false
    /// The header: this store's id (``recover(storeId:)``), this engine's token (``begin(durable:)``).
    private var header = [UInt8](repeating: 0, count: JournalFile.headerSize)
    /// Where the next record goes, and the last entry number the file holds.
    private var end = 0
    private var lastSeq: Int64?
    /// Set when a failed append could not be undone: what the file holds is no longer known, so
    /// nothing more is appended (the next open reads what is there).
    private var broken: StoreError?
    /// The entries the file held when it was taken over: the longest valid run of records.
    private(set) var recovered: [(seq: Int64, body: [UInt8])] = []

    /// Takes over the journal of the store at `storePath` (made, empty, if there is none): holds
    /// it exclusively, once an append of another engine in progress is done, until
    /// ``begin(durable:)``. An engine opening the store claims the store's tables and reads the
    /// journal (``recover(storeId:)``) meanwhile, so two engines opening it at once do one after
    /// the other, and the one that opened last owns both.
    init(storePath: String, durability: Durability) throws {
        path = Self.path(forStore: storePath)
        self.storePath = storePath
        self.durability = durability
        let existed = access(path, F_OK) == 0
        fd = posixOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure("cannot open", path) }
        // A file just made is in its folder for good only once the folder is synced: before any
        // record in it counts as on disk ("full"), and on "normal" too, so that a power loss
        // takes at most the records not yet synced, not the whole file (one sync per file made).
        if !existed { Self.syncFolder(of: path) }
        guard Self.lock(fd, LOCK_EX) else {
            let failure = Self.failure("cannot lock", path)
            close()
            throw failure
        }
        exclusive = true
    }

    deinit { close() }

    /// Reads what the journal taken over holds: the longest valid run of records, nothing if it
    /// is another store's (the store's id is `storeId`) or new.
    func recover(storeId: String) throws {
        let id = Array(storeId.utf8.prefix(Self.idSize))
        header.replaceSubrange(0..<Self.magic.count, with: Self.magic)
        header.replaceSubrange(Self.idOffset..<Self.idOffset + id.count, with: id)
        let bytes = try Self.readAll(fd, path)
        guard bytes.count >= Self.headerSize,
              bytes[0..<Self.tokenOffset].elementsEqual(header[0..<Self.tokenOffset]) else { return }
        recovered = Self.records(in: bytes)
    }

    /// The entry numbers of the valid records in the journal of the store at `path`, read as it
    /// is (for tests and benchmarks; nothing is locked).
    package static func entryNumbers(ofStore path: String) -> [Int64] {
        guard let data = FileManager.default.contents(atPath: Self.path(forStore: path)), data.count >= headerSize else {
            return []
        }
        return records(in: [UInt8](data)).map(\.seq)
    }

    /// The valid records of a file's bytes after its header, in order.
    static func records(in bytes: [UInt8]) -> [(seq: Int64, body: [UInt8])] {
        var out: [(seq: Int64, body: [UInt8])] = []
        var at = headerSize
        while bytes.count - at >= recordHead {
            let length = Int(bytes.loadLE(UInt32.self, at))
            let zero = bytes.loadLE(UInt32.self, at + 4)
            let seq = Int64(bitPattern: bytes.loadLE(UInt64.self, at + 8))
            let sum = bytes.loadLE(UInt64.self, at + 16)
            let start = at + recordHead
            guard zero == 0, length <= bytes.count - start else { break }
            if let last = out.last?.seq, seq != last &+ 1 { break }
            let body = Array(bytes[start..<start + length])
            guard checksum(seq: seq, body) == sum else { break }
            out.append((seq, body))
            at = start + length
        }
        return out
    }

    /// Empties the journal taken over and makes it this engine's (its token in the header),
    /// then lets go of it: an engine still appending to it is refused from now on. `durable`
    /// makes the emptying survive a power loss whatever the durability (entries dropped at open
    /// must never come back).
    func begin(durable: Bool = false) throws {
        let durable = durable || durability == .full
        var token = [UInt8](repeating: 0, count: Self.tokenSize)
        for i in token.indices { token[i] = UInt8.random(in: 0...255) }
        header.replaceSubrange(Self.tokenOffset..<Self.headerSize, with: token)
        try Self.write(fd, header, at: 0, path)
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.failure("cannot stat", path) }
        if st.st_size != off_t(Self.headerSize), ftruncate(fd, off_t(Self.headerSize)) != 0 {
            throw Self.failure("cannot empty", path)
        }
        if durable, fsync(fd) != 0 { throw Self.failure("cannot sync", path) }
        end = Self.headerSize
        lastSeq = nil
        recovered = []
        _ = flock(fd, LOCK_UN)
        exclusive = false
    }

    /// The bytes the file holds: its header and records.
    var size: Int { end }

    /// Appends entry `seq`. First, if every entry the file holds is in the tables and on disk
    /// (`syncedThrough`), empties it. Refused with `storeInUse` once another engine has taken the
    /// journal over.
    func append(seq: Int64, body: [UInt8], syncedThrough: Int64) throws {
        guard fd >= 0, !exclusive else { throw StoreError(code: "storeClosed", message: "the store's journal is closed") }
        if let broken { throw broken }
        // Entry numbers follow each other by one: reading stops where they do not.
        if let last = lastSeq, seq != last + 1 {
            assertionFailure("journal entry \(seq) after \(last)")
            throw StoreError(code: "storeWriteFailed", message: "journal entry \(seq) cannot follow entry \(last)")
        }
        guard Self.lock(fd, LOCK_SH) else { throw Self.failure("cannot lock", path) }
        defer { _ = flock(fd, LOCK_UN) }
        guard try ownsFile() else { throw StoreError.storeInUse(storePath) }
        if let last = lastSeq, last <= syncedThrough {
            guard ftruncate(fd, off_t(Self.headerSize)) == 0 else { throw Self.failure("cannot empty", path) }
            end = Self.headerSize
            lastSeq = nil
        }
        var head = [UInt8](repeating: 0, count: Self.recordHead)
        head.storeLE(UInt32(body.count), 0)
        head.storeLE(UInt64(bitPattern: seq), 8)
        head.storeLE(Self.checksum(seq: seq, body), 16)
        try head.withUnsafeBytes { h in
            try body.withUnsafeBytes { b in
                var parts = [iovec(iov_base: UnsafeMutableRawPointer(mutating: h.baseAddress), iov_len: h.count),
                             iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count)]
                let total = h.count + b.count
                let written = pwritev(fd, &parts, 2, off_t(end))
                guard written == total else {
                    throw undo(Self.writeFailure("cannot append to", path, written: written, of: total))
                }
            }
        }
        // With "full", the record counts only once on disk; a failed sync leaves it unknown
        // whether it is, so it is cut off again (the call fails, and its number is used again).
        if durability == .full, Self.syncData(fd) != 0 { throw undo(Self.failure("cannot sync", path)) }
        end += Self.recordHead + body.count
        lastSeq = seq
    }

    /// A failed append (cut short, or not synced): what it wrote is cut off again, and synced so
    /// with "full"; if that fails too, the journal takes nothing more (the next open reads what
    /// the file holds). Returns `failure`, to be thrown.
    private func undo(_ failure: StoreError) -> StoreError {
        let undone = ftruncate(fd, off_t(end)) == 0 && (durability != .full || Self.syncData(fd) == 0)
        if !undone {
            broken = StoreError(code: "storeWriteFailed",
                                message: "the store's journal \(path) could not be restored after a failed write; "
                                    + "close the engine and open the store again")
        }
        return failure
    }

    /// Closes the file, emptied first if every entry it holds is in the tables and on disk.
    func close(syncedThrough: Int64? = nil) {
        if fd >= 0, !exclusive, broken == nil, let synced = syncedThrough, let last = lastSeq, last <= synced,
           Self.lock(fd, LOCK_SH)
        {
            if (try? ownsFile()) == true { _ = ftruncate(fd, off_t(Self.headerSize)) }
            _ = flock(fd, LOCK_UN)
        }
        if fd >= 0 { _ = posixClose(fd) }  // releases a lock still held
        fd = -1
    }

    /// `flock`, again when a signal interrupts it.
    private static func lock(_ f: Int32, _ operation: Int32) -> Bool {
        while flock(f, operation) != 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Whether the file's header still holds this engine's token (another engine opening the
    /// store writes its own). The caller holds a `flock`. A header the disk cannot read is a
    /// failure (`storeWriteFailed`, thrown), not another engine's.
    private func ownsFile() throws -> Bool {
        var onDisk = [UInt8](repeating: 0, count: Self.tokenSize)
        let n = onDisk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Self.tokenSize, off_t(Self.tokenOffset)) }
        if n < 0 { throw Self.failure("cannot read the header of", path) }
        return n == Self.tokenSize && onDisk[...] == header[Self.tokenOffset..<Self.headerSize]
    }

    // MARK: Bytes

    /// A Fletcher-style sum over the payload's 64-bit words (the last one padded with zeros),
    /// seeded with the entry number and the length: what tells a record written whole from one
    /// a kill or a power loss cut short, or from old bytes past the end.
    static func checksum(seq: Int64, _ body: [UInt8]) -> UInt64 {
        var a = UInt64(bitPattern: seq) ^ 0x9E37_79B9_7F4A_7C15
        var b = UInt64(body.count) &* 0xC2B2_AE3D_27D4_EB4F
        body.withUnsafeBytes { raw in
            let words = raw.count / 8
            for i in 0..<words {
                a = a &+ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                b = b &+ a
            }
            var tail: UInt64 = 0
            for i in (words * 8)..<raw.count { tail |= UInt64(raw[i]) << (8 * UInt64(i - words * 8)) }
            a = a &+ tail
            b = b &+ a
        }
        return a ^ (b &* 0x1000_0000_01B3)
    }

    /// The file's bytes, read into an array made to the file's size and not zeroed first (the
    /// replay after a kill reads megabytes), and not copied again: a file cut short while being
    /// read gives what was read.
    private static func readAll(_ f: Int32, _ path: String) throws -> [UInt8] {
        var st = stat()
        guard fstat(f, &st) == 0 else { throw failure("cannot stat", path) }
        let size = Int(st.st_size)
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var at = 0
            while at < size {
                let n = pread(f, buffer.baseAddress! + at, size - at, off_t(at))
                guard n > 0 else {
                    failed = n < 0
                    break
                }
                at += n
            }
            count = at
        }
        if failed { throw failure("cannot read", path) }
        return bytes
    }

    private static func write(_ f: Int32, _ bytes: [UInt8], at offset: Int, _ path: String) throws {
        let n = bytes.withUnsafeBytes { pwrite(f, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count else { throw writeFailure("cannot write", path, written: n, of: bytes.count) }
    }

    /// Syncs the folder holding `path`, so that a file made in it survives a power loss. Best
    /// effort: a folder that cannot be opened or synced (some file systems refuse it) is left as
    /// it is, as SQLite does for its own files.
    private static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let f = posixOpen(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard f >= 0 else { return }
        _ = fsync(f)
        _ = posixClose(f)
    }

    private static func syncData(_ f: Int32) -> Int32 {
        #if canImport(Glibc)
        fdatasync(f)
        #else
        fsync(f)
        #endif
    }

    /// The failure of a write that returned `written` of `total` bytes: errno's when it failed;
    /// when it was cut short (a full disk), how much it wrote, since a short write sets no errno
    /// and the one left over from an earlier call would name another error.
    private static func writeFailure(_ what: String, _ path: String, written: Int, of total: Int) -> StoreError {
        guard written >= 0 else { return failure(what, path) }
        return StoreError(code: "storeWriteFailed", message: "\(what) the store's journal \(path): "
            + "\(written) of \(total) bytes written (is the disk full?)")
    }

    private static func failure(_ what: String, _ path: String) -> StoreError {
        StoreError(code: "storeWriteFailed", message: "\(what) the store's journal \(path): \(String(cString: strerror(errno)))")
    }
}

extension [UInt8] {
    func loadLE<T: FixedWidthInteger>(_: T.Type, _ offset: Int) -> T {
        withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    mutating func storeLE<T: FixedWidthInteger>(_ value: T, _ offset: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }
}

// The C functions whose names the type's own members (`close`) would hide.
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }
private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
