import CJansson
import Glibc
import WorkflowCAPI
import WorkflowCore
import XCTest

/// The C API layer from Swift: the json_t bridge, statuses and the error record.
final class JanssonBridgeTests: XCTestCase {
    func testValuesRoundTripThroughJanssonKeepingOrderAndNumberKinds() throws {
        let value = try JSON(parsing: #"{"z": 1, "a": [true, null, 4.0, "é→😀"], "m": {"k": -9223372036854775808}}"#)
        let j = try XCTUnwrap(JanssonBridge.toJansson(value))
        defer { json_decref(j) }
        let back = try JanssonBridge.toJSON(j, name: "v")
        XCTAssertEqual(back, value)
        XCTAssertEqual(back.compactText, value.compactText, "key order and 4.0 stay")
    }

    func testInvalidUTF8MadeWithNocheckIsRefusedNamingThePath() {
        let o = json_object()!
        defer { json_decref(o) }
        let bad: [CChar] = [CChar(bitPattern: 0xC3), 0x28, 0]
        json_object_set_new(o, "name", json_stringn_nocheck(bad, 2))
        XCTAssertThrowsError(try JanssonBridge.toJSON(o, name: "args")) { error in
            let e = error as? EngineError
            XCTAssertEqual(e?.code, "invalidUTF8")
            XCTAssertEqual(e?.details["argument"], "args.name")
        }
    }

    func testInvalidUTF8DeepInsideNamesTheWholePath() {
        let bad: [CChar] = [CChar(bitPattern: 0xC3), 0x28, 0]
        // {"a": [1, {"b": <bad>}]}
        let o = json_object()!
        defer { json_decref(o) }
        let a = json_array()!
        json_array_append_new(a, json_integer(1))
        let inner = json_object()!
        json_object_set_new(inner, "b", json_stringn_nocheck(bad, 2))
        json_array_append_new(a, inner)
        json_object_set_new(o, "a", a)
        XCTAssertThrowsError(try JanssonBridge.toJSON(o, name: "args")) { error in
            let e = error as? EngineError
            XCTAssertEqual(e?.code, "invalidUTF8")
            XCTAssertEqual(e?.message, "args.a[1].b is not valid UTF-8")
            XCTAssertEqual(e?.details["argument"], "args.a[1].b")
        }
        // [{"ok": 1, <bad key>: 2}]
        let list = json_array()!
        defer { json_decref(list) }
        let keyed = json_object()!
        json_object_set_new(keyed, "ok", json_integer(1))
        json_object_setn_new_nocheck(keyed, bad, 2, json_integer(2))
        json_array_append_new(list, keyed)
        XCTAssertThrowsError(try JanssonBridge.toJSON(list, name: "args")) { error in
            let e = error as? EngineError
            XCTAssertEqual(e?.code, "invalidUTF8")
            XCTAssertEqual(e?.message, "args[0] has a key that is not valid UTF-8")
            XCTAssertEqual(e?.details["argument"], "args[0]")
        }
    }

    func testManyRepeatedShortStringsConvertExactly() {
        // More distinct short strings than the conversion's string cache holds, each repeated,
        // with keys and values of every short length and a few longer ones.
        var expected: [JSON] = []
        for i in 0..<3000 {
            let s = String(repeating: "k", count: i % 16) + "\(i % 700)"
            expected.append(["\(s)": .string(s), "long-\(i % 5)-xxxxxxxxxxxxxxxxxxxx": .string("é\(i % 3)")])
        }
        expected.append(["": ""])
        let value = JSON.array(expected)
        guard let j = JanssonBridge.toJansson(value) else { return XCTFail("no json_t") }
        defer { json_decref(j) }
        XCTAssertEqual(try JanssonBridge.toJSON(j, name: "args"), value)
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let root = json_array()!
        defer { json_decref(root) }
        var level = root
        for _ in 0..<2000 {
            let child = json_array()!
            json_array_append_new(level, child)
            level = child
        }
        XCTAssertThrowsError(try JanssonBridge.toJSON(root, name: "args")) { error in
            XCTAssertEqual((error as? EngineError)?.code, "tooDeep")
            XCTAssertEqual((error as? EngineError)?.message, "args is nested deeper than 512 levels")
        }
    }
}

final class StatusAndErrorRecordTests: XCTestCase {
    private struct Record {
        var status: Int32
        var code: String
        var message: String
        var detailsJSON: String
    }

    /// Reads wf_error through the layout the header declares.
    private func last() -> Record {
        let p = wf_error_last()
        let status = p.load(as: Int32.self)
        let stride = MemoryLayout<UnsafeRawPointer>.stride
        func text(_ offset: Int) -> String {
            String(cString: p.load(fromByteOffset: offset, as: UnsafePointer<CChar>.self))
        }
        return Record(status: status, code: text(stride), message: text(2 * stride), detailsJSON: text(4 * stride))
    }

    func testEveryStatusHasItsCName() {
        let expected: [Int32: String] = [0: "WF_OK", -2: "WF_EINVALID", -3: "WF_ENOTFOUND", -4: "WF_ESTATE",
                                         -5: "WF_ETEMPLATE", -6: "WF_ECONFLICT", -7: "WF_ESTORE", -8: "WF_EUNSUPPORTED",
                                         -31: "WF_ITEROVER", -99: "WF_EINTERNAL", 12: "WF_UNKNOWN"]
        for (status, name) in expected { XCTAssertEqual(String(cString: wf_status_name(status)), name) }
        XCTAssertEqual(Int(wf_libversion_number()), 100)
        XCTAssertEqual(String(cString: wf_libversion()), "0.1.0")
    }

    func testCallsThroughTheTextInterfaceReportEveryFailureInTheRecord() throws {
        var engine: OpaquePointer?
        XCTAssertEqual(wf_engine_open_text(&engine, #"{"clock": {"mode": "manual"}}"#), 0)
        defer { wf_engine_free(engine) }
        var out: UnsafeMutablePointer<CChar>?
        XCTAssertEqual(wf_call_text(&out, engine, "clock.now", nil), 0)
        XCTAssertEqual(out.map { String(cString: $0) }, #"{"now":"2026-01-01T00:00:00.000Z"}"#)
        wf_free(out)
        XCTAssertEqual(last().code, "ok")

        XCTAssertEqual(wf_call_text(&out, engine, "clock.now", "null"), 0, "JSON null args mean {}")
        wf_free(out)
        XCTAssertEqual(wf_call_text(&out, engine, "clock.advance", #"{"seconds": "x"}"#), -2)
        XCTAssertNil(out)
        XCTAssertEqual(last().code, "invalidArgument")
        XCTAssertEqual(last().detailsJSON, #"{"argument":"seconds","expected":"a number of seconds"}"#)
        XCTAssertEqual(wf_call_text(&out, engine, "clock.now", #"{"bogus": 1}"#), -2)
        XCTAssertEqual(last().code, "unknownArgument")
        XCTAssertEqual(wf_call_text(&out, engine, "no.such", nil), -8)
        XCTAssertEqual(last().status, -8)
        XCTAssertEqual(wf_call_text(&out, nil, "clock.now", nil), -2)
        XCTAssertEqual(last().message, "engine must not be NULL")
        XCTAssertEqual(wf_call_text(&out, engine, "clock.now", "[1]"), -2)
        XCTAssertEqual(last().message, "args_json must be a JSON object, not array")
        XCTAssertEqual(wf_call_text(&out, engine, "template.get", #"{"templateId": "nope"}"#), -3)
        XCTAssertEqual(last().code, "unknownTemplate")
        wf_error_clear()
        XCTAssertEqual(last().status, 0)
    }

    func testAStoreThatCannotBeOpenedIsWFESTORE() {
        var engine: OpaquePointer?
        XCTAssertEqual(wf_engine_open_text(&engine, #"{"store": "/nonexistent-dir/x/y.sqlite"}"#), -7)
        XCTAssertNil(engine)
        XCTAssertEqual(last().code, "storeOpenFailed")
        XCTAssertEqual(wf_engine_open_text(nil, nil), -2)
    }
}
