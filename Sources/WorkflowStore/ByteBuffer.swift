import WorkflowCore

/// Bytes appended through a pointer: the growable buffer the journal's entries and the records'
/// texts are written into. A commit writes a few hundred bytes per row, a field or a character
/// at a time, and `Array.append` checks uniqueness and capacity and updates its count on every
/// call; this checks capacity only.
///
/// A reference type, used by one writer at a time (``RecordText``, ``ByteWriter``); emptied with
/// ``removeAll()`` to be used again, its storage kept.
final class ByteBuffer: JSONByteSink {
    // No dynamic exclusivity checks: one writer uses a buffer at a time, and no access overlaps
    // another (the checks would cost more than the writes).
    @exclusivity(unchecked) private var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 512) {
        self.capacity = max(16, capacity)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    @inline(__always) func appendByte(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0 else { return }
        if count + n > capacity { grow(to: count + n) }
        (base + count).copyMemory(from: bytes.baseAddress!, byteCount: n)
        count += n
    }

    func appendBytes(_ bytes: [UInt8]) { bytes.withUnsafeBytes { appendBytes($0) } }

    /// `bytes` between double quotes, with one capacity check.
    @inline(__always) func appendQuoted(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        if count + n + 2 > capacity { grow(to: count + n + 2) }
        let p = base + count
        p.storeBytes(of: 0x22, as: UInt8.self)
        if n > 0 { (p + 1).copyMemory(from: bytes.baseAddress!, byteCount: n) }
        p.storeBytes(of: 0x22, toByteOffset: n + 1, as: UInt8.self)
        count += n + 2
    }

    /// Appends `count` bytes that `body` stores at the pointer it is given, with one capacity
    /// check for all of them (a key with its quotes and colon, a string with its quotes).
    @inline(__always) func append(count n: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        if count + n > capacity { grow(to: count + n) }
        body(base + count)
        count += n
    }

    private func grow(to needed: Int) {
        var next = capacity * 2
        while next < needed { next *= 2 }
        let bigger = UnsafeMutableRawPointer.allocate(byteCount: next, alignment: 8)
        bigger.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = bigger
        capacity = next
    }

    /// Makes room for `n` more bytes at once (a writer that knows its size).
    func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    /// The bytes written, in place, until the next write.
    func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes written, made with one `memcpy` (`Array` of a raw buffer copies a
    /// byte at a time: a journal entry of a batch of 64 completions is some 30 KB).
    var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            if let start = out.baseAddress, count > 0 {
                UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: count)
            }
            initialized = count
        }
    }

    func removeAll() { count = 0 }
}
