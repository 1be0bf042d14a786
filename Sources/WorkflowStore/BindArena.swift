/// Bytes bound to a statement until it has run, so that SQLite reads them where they are
/// (`SQLITE_STATIC`) instead of copying every bound text into an allocation of its own, which
/// takes SQLite's global allocator mutex twice per value.
///
/// Chunks are kept between rows and reused from the start after each row runs (``reset()``);
/// a copy never moves while its row is being bound. Used only inside the store's serial queue,
/// by one row at a time.
package final class BindArena: @unchecked Sendable {
    // No dynamic exclusivity checks: the arena is used by one row at a time and no access
    // overlaps another (the checks cost about 0.6 % of a node completion's instructions).
    @exclusivity(unchecked) private var chunks: [UnsafeMutableRawBufferPointer] = []
    @exclusivity(unchecked) private var chunk = 0
    @exclusivity(unchecked) private var used = 0
    private static let chunkSize = 64 * 1024

    package init() {}

    /// A copy of `bytes` that stays where it is until ``reset()``. `bytes` must not be empty.
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        let n = bytes.count
        while true {
            guard chunk < chunks.count else {
                chunks.append(.allocate(byteCount: max(n, Self.chunkSize), alignment: 16))
                continue
            }
            if used + n <= chunks[chunk].count {
                let destination = chunks[chunk].baseAddress! + used
                destination.copyMemory(from: bytes.baseAddress!, byteCount: n)
                used += n
                return UnsafeRawPointer(destination)
            }
            if used == 0 {
                // Empty and still too small: nothing in it is bound, so it is replaced.
                chunks[chunk].deallocate()
                chunks[chunk] = .allocate(byteCount: max(n, Self.chunkSize), alignment: 16)
            } else {
                chunk += 1
                used = 0
            }
        }
    }

    /// The row ran: every copy may be overwritten.
    func reset() {
        chunk = 0
        used = 0
    }

    deinit {
        for c in chunks { c.deallocate() }
    }
}
