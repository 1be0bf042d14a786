import WorkflowCore
import WorkflowStore
import XCTest

@testable import WorkflowEngine

/// `workflow.list`'s search reads every workflow's text from one buffer (`WorkflowSearchIndex`)
/// instead of each workflow's summary: it must find exactly what a scan of the summaries finds,
/// through additions, deletions, changed texts, compaction, reopening and a batch's own changes.
final class WorkflowSearchIndexTests: XCTestCase {
    private static func entry(_ id: String, text: String, template: String) -> WorkflowEntry {
        let now = Timestamp(milliseconds: 0)
        return WorkflowEntry(WorkflowSummary(
            workflowId: id, seq: 1, templateId: template, title: text, status: .active, archived: false, createdAt: now,
            updatedAt: now, stepsDone: 0, stepsTotal: 1, awaitCount: 0, hasBlockingAwait: false, searchText: text,
            nextDeadline: nil, queuedRemote: 0, queuedLocal: 0, runningRemote: 0, runningLocal: 0, inboxCount: 0))
    }

    func testRandomAdditionsRemovalsAndNewTextsFindWhatAScanOfTheTextsFinds() {
        var rng = SplitMix64(seed: 5)
        let state = EngineState()
        let words = ["harbor", "photo", "beach", "café", "1", "12", "zebra", ""]
        let templates = ["tpl-1", "tpl-2", "tpl-3"]
        func text() -> String {
            (0..<Int(rng.next() % 3 + 1)).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
        }
        var next = 0
        var compacted = false
        for step in 0..<4_000 {
            let ids = Array(state.entries.keys)
            switch rng.next() % 8 {
            case 0, 1, 2:
                next += 1
                state.addEntry(Self.entry("wf-\(next)", text: text(), template: templates[Int(rng.next() % 3)]))
            case 3 where !ids.isEmpty, 4 where !ids.isEmpty:
                let slots = state.searchIndex.slotCount
                state.removeEntry(ids[Int(rng.next() % UInt64(ids.count))])
                if state.searchIndex.slotCount < slots { compacted = true }
            case 5 where !ids.isEmpty:
                let e = state.entries[ids[Int(rng.next() % UInt64(ids.count))]]!
                var s = e.summary
                s.searchText = text()
                if rng.next() % 4 == 0 { s.templateId = templates[Int(rng.next() % 3)] }
                state.setSummary(e, s)
            case 6 where !ids.isEmpty:  // a commit that changes neither its text nor its template
                let e = state.entries[ids[Int(rng.next() % UInt64(ids.count))]]!
                let slot = e.searchSlot
                var s = e.summary
                s.stepsDone += 1
                state.setSummary(e, s)
                XCTAssertEqual(e.searchSlot, slot, "step \(step): a slot moves only when the text does")
            default:
                break
            }
            XCTAssertEqual(state.searchIndex.count, state.entries.count, "step \(step)")
            let needle = words[Int(rng.next() % UInt64(words.count))] + (rng.next() % 2 == 0 ? "" : " ")
            let templateHit = templates[Int(rng.next() % 3)]
            var asked: [String] = []
            let found = state.searchIndex.matches([Array(needle.utf8)]) { template in
                asked.append(template)
                return template == templateHit
            }
            let expected = state.entries.values.filter {
                needle.isEmpty || $0.summary.searchText.contains(needle) || $0.summary.templateId == templateHit
            }
            XCTAssertEqual(Set(found.map(\.id)), Set(expected.map(\.id)), "step \(step): \"\(needle)\"")
            XCTAssertEqual(found.count, Set(found.map(\.id)).count, "step \(step): each workflow found once")
            XCTAssertEqual(asked.count, Set(asked).count, "step \(step): each template asked about once")
        }
        XCTAssertTrue(compacted, "the freed slots were dropped at least once")
        XCTAssertLessThan(state.searchIndex.slotCount, 2 * state.entries.count + 34, "at most half the slots are free")
    }

    /// The engine's workflows, created, duplicated, deleted by the score (compacting the index),
    /// archived, in a batch and after a reopen: a search lists exactly the workflows whose title
    /// (or template's node titles) holds the query, as the summaries say.
    func testTheListsSearchFollowsCreationsDuplicatesDeletionsBatchesAndAReopen() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let chain = h.register(template: Templates.chain)
        let other = h.register(template: ["schema": "app.workflow/v2", "name": "one",
                                          "nodes": [["id": "A", "kind": "Text", "params": ["text": "a"], "outputs": ["text": "TextRef"]]]])
        var titles: [String: String] = [:]
        for i in 0..<120 {
            let title = ["Harbor photo \(i)", "Beach \(i)", "Zebra crossing \(i)"][i % 3]
            titles[h.create(i % 2 == 0 ? chain : other, ["title": .string(title)])] = title
        }
        func listed(_ search: String, includeArchived: Bool = false) -> Set<String> {
            let rows = h.call("workflow.list", ["search": .string(search), "includeArchived": .bool(includeArchived)])["rows"]?.arrayValue ?? []
            return Set(rows.compactMap { $0["workflowId"]?.stringValue })
        }
        var archived = Set<String>()
        func expected(_ search: String, includeArchived: Bool = false) -> Set<String> {
            let chainIds = Set(h.call("workflow.list", ["includeArchived": true])["rows"]!.arrayValue!
                .filter { $0["templateId"]?.stringValue == chain }.compactMap { $0["workflowId"]?.stringValue })
            let q = search.lowercased()
            return Set(titles.filter { id, title in
                (includeArchived || !archived.contains(id))
                    && (title.lowercased().contains(q) || (chainIds.contains(id) && "make it loud".contains(q)))
            }.keys)
        }
        func check(_ when: String) {
            for search in ["photo 1", "beach", "ZEBRA", "loud", "nothing like it", "1"] {
                XCTAssertEqual(listed(search), expected(search), "\(when): \"\(search)\"")
                XCTAssertEqual(listed(search, includeArchived: true), expected(search, includeArchived: true), "\(when): \"\(search)\", archived too")
            }
            XCTAssertEqual(h.engine.state.searchIndex.count, titles.count, when)
        }
        check("created")
        let source = titles.keys.sorted().first!
        let copy = h.call("workflow.duplicate", ["workflowId": .string(source), "title": "Harbor photo copy"])["workflowId"]!.stringValue!
        titles[copy] = "Harbor photo copy"
        check("duplicated")
        // Deleting most of them frees more than half the index's slots: it is made again.
        let slots = h.engine.state.searchIndex.slotCount
        for id in titles.keys.sorted().prefix(90) {
            h.call("workflow.delete", ["workflowId": .string(id)])
            titles[id] = nil
        }
        XCTAssertLessThan(h.engine.state.searchIndex.slotCount, slots, "compacted")
        let kept = titles.keys.sorted()
        h.call("workflow.archive", ["workflowId": .string(kept[0])])
        archived.insert(kept[0])
        check("deleted and archived")
        // In a batch, the list sees what the batch's earlier calls did.
        let results = h.call("batch", ["calls": [
            ["op": "workflow.create", "args": ["templateId": .string(other), "title": "Harbor photo batch"]],
            ["op": "workflow.delete", "args": ["workflowId": .string(kept[1])]],
            ["op": "workflow.list", "args": ["search": "photo"]],
        ]])["results"]!.arrayValue!
        let made = results[0]["workflowId"]?.stringValue ?? ""
        XCTAssertFalse(made.isEmpty)
        titles[made] = "Harbor photo batch"
        titles[kept[1]] = nil
        let inBatch = Set(results[2]["rows"]?.arrayValue?.compactMap { $0["workflowId"]?.stringValue } ?? [])
        XCTAssertEqual(inBatch, expected("photo"))
        check("after the batch")
        try h.reopen()
        check("reopened")
    }

    /// A text an earlier version kept holds Greek's final sigma as lower-casing left it (ς): the
    /// index folds its own copy, so a query, folded to σ, finds it.
    func testATextKeptWithAFinalSigmaIsFoundByTheFoldedQuery() {
        let state = EngineState()
        state.addEntry(Self.entry("wf-1", text: "οδος", template: "tpl-1"))
        state.addEntry(Self.entry("wf-2", text: "οδοσ", template: "tpl-1"))
        let needle = Array(TextSearch.fold("ΟΔΟΣ").utf8)
        XCTAssertEqual(TextSearch.fold("ΟΔΟΣ"), "οδοσ")
        XCTAssertEqual(state.searchIndex.matches([needle]) { _ in false }.map(\.id).sorted(), ["wf-1", "wf-2"])
    }
}
