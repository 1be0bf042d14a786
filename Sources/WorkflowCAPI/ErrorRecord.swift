import CJansson
import Glibc
import WorkflowCore

/// Memory layout of `wf_error` in include/workflow.h. Swift lays out a struct's stored properties
/// in declaration order at their natural alignment, as C does for these field types; the C ABI
/// tests read every field back through the header to hold that true.
struct WFErrorC {
    var status: Int32
    var code: UnsafePointer<CChar>?
    var message: UnsafePointer<CChar>?
    var details: UnsafePointer<json_t>?
    var detailsJSON: UnsafePointer<CChar>?
}

/// The calling thread's error record: the `wf_error` that `wf_error_last()` returns, and the
/// memory its pointers refer to. Replaced by each call on the thread; freed when the thread ends.
final class ErrorRecord {
    let record: UnsafeMutablePointer<WFErrorC>
    private var owned: [UnsafeMutablePointer<CChar>] = []
    private var details: UnsafeMutablePointer<json_t>?
    private var isOK = false

    init() {
        record = .allocate(capacity: 1)
        record.initialize(to: WFErrorC(status: 0, code: nil, message: nil, details: nil, detailsJSON: nil))
        setOK()
    }

    deinit {
        release()
        record.deinitialize(count: 1)
        record.deallocate()
    }

    private func release() {
        for p in owned { free(p) }
        owned = []
        if let d = details { json_decref(d) }
        details = nil
    }

    private func own(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s) ?? strdup("")!
        owned.append(p)
        return UnsafePointer(p)
    }

    func setOK() {
        guard !isOK else { return }
        release()
        details = json_object()
        record.pointee = WFErrorC(status: 0, code: own("ok"), message: own(""), details: UnsafePointer(details),
                                  detailsJSON: own("{}"))
        isOK = true
    }

    func set(_ error: EngineError) {
        release()
        isOK = false
        // Messages are text for people: keep them free of NUL so C sees all of them.
        let message = error.message.replacingNUL()
        details = JanssonBridge.toJansson(.object(error.details)) ?? json_object()
        record.pointee = WFErrorC(status: error.status.rawValue, code: own(error.code.replacingNUL()),
                                  message: own(message), details: UnsafePointer(details),
                                  detailsJSON: own(JSONWriter.string(.object(error.details))))
    }

    // One record per thread, through a pthread key whose destructor frees it.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<ErrorRecord>.fromOpaque(raw).release()
        }
        return key
    }()

    static var current: ErrorRecord {
        if let raw = pthread_getspecific(key) { return Unmanaged<ErrorRecord>.fromOpaque(raw).takeUnretainedValue() }
        let record = ErrorRecord()
        pthread_setspecific(key, Unmanaged.passRetained(record).toOpaque())
        return record
    }
}

extension String {
    func replacingNUL() -> String {
        guard utf8.contains(0) else { return self }
        return String(decoding: utf8.map { $0 == 0 ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }
}
