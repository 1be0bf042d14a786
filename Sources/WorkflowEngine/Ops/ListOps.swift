import Foundation
import WorkflowCore
import WorkflowStore

extension Engine {
    /// `workflow.list`: rows from the summaries kept for every workflow (no workflow is loaded),
    /// a search's through the search index (``EngineState/searchIndex``).
    static func listWorkflows(_ engine: Engine, _ uow: UnitOfWork, _ args: Args) throws(EngineError) -> JSON {
        let search = try args.optionalString("search").map(TextSearch.fold)?.trimmingSpaces()
        let filter = try args.optionalChoice("filter", ["all", "active", "done", "failed"]) ?? "all"
        let sort = try args.optionalChoice("sort", ["recent", "name"]) ?? "recent"
        let includeArchived = try args.optionalBool("includeArchived") ?? false
        let limit = Int(try args.optionalInt("limit", min: 1, max: 1_000_000) ?? 1_000_000)
        var rows: [WorkflowSummary] = []
        // Text is searched by its bytes; a title or a query with accents may be written composed
        // (é) or decomposed (e + ◌́): both spellings of the query are looked for.
        var needles = [Array((search ?? "").utf8)]
        if let search, search.utf8.contains(where: { $0 >= 0x80 }) {
            for form in [search.precomposedStringWithCanonicalMapping, search.decomposedStringWithCanonicalMapping] {
                let bytes = Array(form.utf8)
                if !needles.contains(bytes) { needles.append(bytes) }
            }
        }
        let needle = needles[0]
        // A workflow's text kept by an earlier version may hold ς (the index folds its own copy).
        func found(_ text: String) -> Bool {
            let folded = TextSearch.foldingSigmas(text)
            return needles.contains { TextSearch.contains(folded, $0) }
        }
        // Node titles and ids come from the template: decided once per template.
        var templateMatches: [String: Bool] = [:]
        func templateFound(_ templateId: String) -> Bool {
            if let known = templateMatches[templateId] { return known }
            let hit = uow.template(templateId).map { found($0.searchText) } ?? false
            templateMatches[templateId] = hit
            return hit
        }
        func keep(_ s: WorkflowSummary) -> Bool {
            if s.archived && !includeArchived { return false }
            switch filter {
            case "active": return s.status == .active
            case "done": return s.status == .done
            case "failed": return s.status == .failed
            default: return true
            }
        }
        // The committed workflows the search finds (every one without a search: an empty needle
        // matches all), through the search index: only those are looked at further. Those an
        // earlier call of the same `batch` changed, created or deleted are taken as that call
        // left them instead.
        let staged = !uow.touched.isEmpty
        for e in uow.state.searchIndex.matches(needles, templateMatches: templateFound)
        where !(staged && uow.stagedEntry(e.id) != nil) {
            let s = e.summary
            if keep(s) { rows.append(s) }
        }
        for t in uow.touched {
            guard let wf = t.working else { continue }
            let s = try engine.summary(uow, wf, staged: t)
            if keep(s), needle.isEmpty || found(s.searchText) || templateFound(s.templateId) { rows.append(s) }
        }
        if sort == "name" {
            // Alphabetical as a person reads it, the same on every machine: case and accents
            // folded ("Ärger" before "zeta"), no locale; then the exact title, then creation order.
            let keyed = rows.map { (key: $0.title.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil), row: $0) }
            rows = keyed.sorted { a, b in
                if a.key != b.key { return a.key < b.key }
                if a.row.title != b.row.title { return a.row.title < b.row.title }
                return a.row.seq < b.row.seq
            }.map(\.row)
        } else {
            rows.sort { $0.updatedAt != $1.updatedAt ? $0.updatedAt > $1.updatedAt : $0.seq > $1.seq }
        }
        let total = rows.count
        return ["rows": .array(rows.prefix(limit).map(row)), "total": JSON(total)]
    }

    static func row(_ s: WorkflowSummary) -> JSON {
        var o = JSONObject(minimumCapacity: 12)
        o["workflowId"] = .string(s.workflowId)
        o["title"] = .string(s.title)
        o["status"] = .string(s.status.rawValue)
        o["stepsDone"] = JSON(s.stepsDone)
        o["stepsTotal"] = JSON(s.stepsTotal)
        o["progress"] = .double(s.stepsTotal == 0 ? 0 : Double(s.stepsDone) / Double(s.stepsTotal))
        o["updatedAt"] = JSON(s.updatedAt)
        o["awaitCount"] = JSON(s.awaitCount)
        o["hasBlockingAwait"] = .bool(s.hasBlockingAwait)
        o["templateId"] = .string(s.templateId)
        o["archived"] = .bool(s.archived)
        return .object(o)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
