import Foundation
import WorkflowCore

extension RecordCoding {
    /// Guards every ``Run/textCache``: copies of a run share the cache, and copies may be written
    /// by two stores on two threads at once (one engine's calls are serialised, so the lock is
    /// never waited for there; taking it costs a few dozen instructions per run written).
    static let textCacheLock = NSLock()

    /// The run's kept text, if any.
    private static func keptText(_ cache: RecordTextCache) -> [UInt8]? {
        textCacheLock.lock()
        defer { textCacheLock.unlock() }
        return cache.bytes
    }

    /// Keeps `bytes` (nil: lets the kept text go).
    private static func keep(_ bytes: [UInt8]?, in cache: RecordTextCache) {
        textCacheLock.lock()
        defer { textCacheLock.unlock() }
        cache.bytes = bytes
    }

    /// A run's `data` text, written straight into the bytes the store binds: exactly
    /// `JSONWriter.bytes(RecordCoding.encode(run))` (same members, same order, same escaping and
    /// number forms), without building the intermediate JSON object. Every `job.update` writes
    /// one of these. Debug builds check it against the JSON path on every write.
    static func runBytes(_ r: Run) -> [UInt8] {
        var w = RecordText()
        withUnsafePointer(to: r) { writeRun($0, &w) }
        let bytes = w.finish()
        assert(bytes == JSONWriter.bytes(encode(r)), "RecordCoding.runBytes differs from the JSON encoding")
        return bytes
    }

    /// ``runBytes(_:)`` into `w` (empty, or ``RecordText/reset()``), to be finished by the caller.
    /// The members that never change after the run is made are written once per run: their text
    /// is kept with it (``Run/textCache``) and copied into each later write, until a write of the
    /// run finished (usually its last) lets it go. The run is read where it is (a copy would
    /// retain and release its every string and table).
    static func writeRun(_ r: UnsafePointer<Run>, _ w: inout RecordText) {
        let cache = r.pointee.textCache
        let terminal = r.pointee.status.isTerminal
        if let kept = keptText(cache) {
            w.appendOpening(kept)
            if terminal { keep(nil, in: cache) }
        } else {
            w.key("number"); w.int(r.pointee.number)
            w.key("mode"); w.string(r.pointee.mode.rawValue)
            w.key("kind"); w.string(r.pointee.kind)
            w.key("trigger"); w.string(r.pointee.trigger.rawValue)
            w.key("params"); w.object(r.pointee.params)
            w.key("inputs"); w.portMap(r.pointee.inputs)
            w.key("idempotencyKey"); w.string(r.pointee.idempotencyKey)
            w.key("createdAt"); w.int(r.pointee.createdAt.milliseconds)
            if !terminal { keep(w.writtenBytes, in: cache) }
        }
        w.key("status"); w.string(r.pointee.status.rawValue)
        if let j = r.pointee.jobId { w.key("jobId"); w.string(j) }
        if r.pointee.submitAttempts > 0 { w.key("submitAttempts"); w.int(r.pointee.submitAttempts) }
        if r.pointee.submitFailures > 0 { w.key("submitFailures"); w.int(r.pointee.submitFailures) }
        if let t = r.pointee.nextAttemptAt { w.key("nextAttemptAt"); w.int(t.milliseconds) }
        if let t = r.pointee.nextPollAt { w.key("nextPollAt"); w.int(t.milliseconds) }
        if r.pointee.pollCount > 0 { w.key("pollCount"); w.int(r.pointee.pollCount) }
        if r.pointee.pollFailures > 0 { w.key("pollFailures"); w.int(r.pointee.pollFailures) }
        if let p = r.pointee.progress { w.key("progress"); w.double(p) }
        if let t = r.pointee.estimatedEndAt { w.key("estimatedEndAt"); w.int(t.milliseconds) }
        if !r.pointee.logTail.isEmpty {
            w.key("logTail")
            w.byte(0x5B)
            for (i, line) in r.pointee.logTail.enumerated() {
                if i > 0 { w.byte(0x2C) }
                w.string(line)
            }
            w.byte(0x5D)
        }
        if !r.pointee.outputs.isEmpty { w.key("outputs"); w.portMap(r.pointee.outputs) }
        if !r.pointee.pendingDownloads.isEmpty { w.key("pendingDownloads"); w.portMap(r.pointee.pendingDownloads) }
        if r.pointee.downloadFailures > 0 { w.key("downloadFailures"); w.int(r.pointee.downloadFailures) }
        if let t = r.pointee.nextDownloadAt { w.key("nextDownloadAt"); w.int(t.milliseconds) }
        if r.pointee.cancelFailures > 0 { w.key("cancelFailures"); w.int(r.pointee.cancelFailures) }
        if let t = r.pointee.nextCancelAt { w.key("nextCancelAt"); w.int(t.milliseconds) }
        if r.pointee.holdsSlot { w.key("holdsSlot"); w.literal("true") }
        if let t = r.pointee.startedAt { w.key("startedAt"); w.int(t.milliseconds) }
        if let t = r.pointee.finishedAt { w.key("finishedAt"); w.int(t.milliseconds) }
        if let e = r.pointee.error { w.key("error"); w.error(e) }
    }
}

extension RecordCoding {
    /// A node's `data` text, written straight into bytes: exactly
    /// `JSONWriter.bytes(RecordCoding.encode(node))`, as ``runBytes(_:)`` is for runs. A
    /// completion writes three or four of these. Debug builds check it against the JSON path.
    static func nodeBytes(_ n: NodeInstance) -> [UInt8] {
        var w = RecordText()
        withUnsafePointer(to: n) { writeNode($0, &w) }
        let bytes = w.finish()
        assert(bytes == JSONWriter.bytes(encode(n)), "RecordCoding.nodeBytes differs from the JSON encoding")
        return bytes
    }

    /// ``nodeBytes(_:)`` into `w`, to be finished by the caller.
    static func writeNode(_ n: UnsafePointer<NodeInstance>, _ w: inout RecordText) {
        w.key("state"); w.string(n.pointee.state.rawValue)
        if let r = n.pointee.blockedReason { w.key("blockedReason"); w.blockedReason(r) }
        if !n.pointee.params.isEmpty { w.key("params"); w.object(n.pointee.params) }
        if !n.pointee.bindings.isEmpty { w.key("bindings"); w.portMap(n.pointee.bindings) }
        if !n.pointee.inputSelections.isEmpty { w.key("inputSelections"); w.portMap(n.pointee.inputSelections) }
        if !n.pointee.outputs.isEmpty { w.key("outputs"); w.portMap(n.pointee.outputs) }
        if let r = n.pointee.currentRunId { w.key("currentRunId"); w.string(r) }
        if let e = n.pointee.lastError { w.key("lastError"); w.error(e) }
        w.key("attempts"); w.int(n.pointee.attempts)
        w.key("updatedAt"); w.int(n.pointee.updatedAt.milliseconds)
    }
}

extension RecordCoding {
    /// An asset's `data` text, written straight into bytes: exactly
    /// `JSONWriter.bytes(RecordCoding.encode(asset))`. Every output of a completion writes one.
    static func assetBytes(_ a: Asset) -> [UInt8] {
        var w = RecordText()
        writeAsset(a, &w)
        let bytes = w.finish()
        assert(bytes == JSONWriter.bytes(encode(a)), "RecordCoding.assetBytes differs from the JSON encoding")
        return bytes
    }

    /// ``assetBytes(_:)`` into `w`, to be finished by the caller.
    static func writeAsset(_ a: Asset, _ w: inout RecordText) {
        w.key("uri"); w.string(a.uri)
        if let b = a.bytes { w.key("bytes"); w.int(b) }
        if let h = a.hash { w.key("hash"); w.string(h) }
        w.key("meta"); w.object(a.meta)
        if let p = a.provenance {
            w.key("provenance")
            w.object { w in
                w.key("workflowId"); w.string(p.workflowId)
                w.key("nodeId"); w.string(p.nodeId)
                w.key("runId"); w.string(p.runId)
                w.key("port"); w.string(p.port)
            }
        }
    }
}

/// Compact JSON object text, member by member, written as ``JSONWriter`` writes it. One can be
/// used again for the next record (``reset()``), its storage kept.
struct RecordText {
    private var out = ByteBuffer()
    private var first = true

    init() {}

    /// Empties it for the next object, keeping its storage.
    mutating func reset() {
        out.removeAll()
        first = true
    }

    /// Closes the object and hands its bytes to `body`, in place (``finish()`` without a copy).
    mutating func withFinished<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        if first {
            out.appendByte(0x7B)
            first = false
        }
        out.appendByte(0x7D)
        return out.withBytes(body)
    }

    mutating func byte(_ b: UInt8) { out.appendByte(b) }

    /// The text written so far (an object opened, its members, not closed): for a writer that
    /// keeps it to open a later object with (``appendOpening(_:)``).
    var writtenBytes: [UInt8] { out.bytes }

    /// Opens the object with `bytes` that ``writtenBytes`` gave (its first members): the text
    /// must be empty.
    mutating func appendOpening(_ bytes: [UInt8]) {
        precondition(first && out.count == 0, "appendOpening on a text already begun")
        out.appendBytes(bytes)
        first = false
    }

    /// A literal's bytes where they are (a literal always has its text as UTF-8 in place;
    /// `withUTF8Buffer` would cost more than copying it).
    @inline(__always) private static func bytes(_ s: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }

    mutating func literal(_ s: StaticString) { out.appendBytes(Self.bytes(s)) }

    /// Opens the object before the first member; keys are plain ASCII names, never escaped.
    /// Written with one capacity check: `{` or `,`, the quoted key and the colon.
    mutating func key(_ k: StaticString) {
        let n = k.utf8CodeUnitCount
        let opening: UInt8 = first ? 0x7B : 0x2C
        first = false
        out.append(count: n + 4) { p in
            p.storeBytes(of: opening, as: UInt8.self)
            p.storeBytes(of: 0x22, toByteOffset: 1, as: UInt8.self)
            (p + 2).copyMemory(from: k.utf8Start, byteCount: n)
            p.storeBytes(of: 0x22, toByteOffset: n + 2, as: UInt8.self)
            p.storeBytes(of: 0x3A, toByteOffset: n + 3, as: UInt8.self)
        }
    }

    /// A nested object as the value of the member just keyed: `body` writes its members (an
    /// object with none is `{}`), in the same buffer.
    mutating func object(_ body: (inout RecordText) -> Void) {
        let outer = first
        first = true
        body(&self)
        if first { out.appendByte(0x7B) }
        out.appendByte(0x7D)
        first = outer
    }

    mutating func int(_ i: Int) { int(Int64(i)) }

    mutating func int(_ i: Int64) { JSONWriter.writeInt(i, into: &out) }

    mutating func double(_ d: Double) { JSONWriter.writeDouble(d, into: &out) }

    mutating func string(_ s: String) { JSONWriter.writeString(s, into: &out) }

    /// A port map as ``RecordCoding/portMap(_:)-swift.type.method`` encodes it: keys sorted.
    mutating func portMap(_ m: [String: String]) {
        guard !m.isEmpty else {
            literal("{}")
            return
        }
        out.appendByte(0x7B)
        if m.count == 1, let (k, v) = m.first {  // most ports: nothing to sort
            string(k)
            out.appendByte(0x3A)
            string(v)
            out.appendByte(0x7D)
            return
        }
        if m.count == 2 {  // two ports (a node with two inputs): in order, without sorting a copy
            var i = m.startIndex
            let a = m[i]
            m.formIndex(after: &i)
            let b = m[i]
            let (x, y) = a.key < b.key ? (a, b) : (b, a)
            string(x.key)
            out.appendByte(0x3A)
            string(x.value)
            out.appendByte(0x2C)
            string(y.key)
            out.appendByte(0x3A)
            string(y.value)
            out.appendByte(0x7D)
            return
        }
        var firstMember = true
        for (k, v) in m.sorted(by: { $0.key < $1.key }) {
            if !firstMember { out.appendByte(0x2C) }
            firstMember = false
            string(k)
            out.appendByte(0x3A)
            string(v)
        }
        out.appendByte(0x7D)
    }

    /// Text written by another ``RecordText`` (a nested object).
    mutating func append(_ bytes: [UInt8]) { out.appendBytes(bytes) }

    /// Any other value, through the writer itself.
    mutating func json(_ v: JSON) { JSONWriter.write(v, into: &out) }

    /// An object value (params, details): `{}` at once when it has no member.
    mutating func object(_ o: JSONObject) {
        if o.isEmpty { literal("{}") } else { JSONWriter.write(.object(o), into: &out) }
    }

    /// A node's or run's error as ``RecordCoding/error(_:)-swift.type.method`` encodes it,
    /// written straight into the text.
    mutating func error(_ e: NodeError) {
        object { w in
            w.key("code"); w.string(e.code)
            w.key("message"); w.string(e.message)
            if let h = e.hint { w.key("hint"); w.string(h) }
            if !e.details.isEmpty { w.key("details"); w.object(e.details) }
            if e.isInterruption != RecordCoding.impliesInterruption(e.code) {
                w.key("interruption"); w.literal(e.isInterruption ? "true" : "false")
            }
        }
    }

    /// A blocked reason as ``RecordCoding/blockedReason(_:)`` encodes it.
    mutating func blockedReason(_ r: BlockedReason) {
        object { w in
            w.key("code"); w.string(r.code)
            w.key("message"); w.string(r.message)
            if !r.details.isEmpty { w.key("details"); w.object(r.details) }
        }
    }

    /// The text's bytes; an object with no member is `{}`.
    mutating func finish() -> [UInt8] {
        if first { return [0x7B, 0x7D] }
        out.appendByte(0x7D)
        return out.bytes
    }
}
