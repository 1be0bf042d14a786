import WorkflowCore

/// The search text of every committed workflow (its lower-cased title, its summary's
/// `searchText`) in one contiguous buffer, with the template each workflow comes from:
/// what `workflow.list`'s search scans.
///
/// Scanning the summaries themselves meant, for every workflow, a dictionary bucket, its entry,
/// its summary's storage and its text's storage: four objects scattered over the heap, each a
/// trip to memory on a machine whose caches do not hold 10,000 workflows' worth (about 30,000
/// of them for one search, most of the call; docs/BENCHMARKS.md). Here a search reads two
/// arrays in order, and only the workflows it finds are looked at further.
///
/// Kept by ``EngineState`` as its entries change (``EngineState/addEntry(_:)``,
/// ``EngineState/removeEntry(_:)``, ``EngineState/setSummary(_:_:)``): a workflow added gets a
/// slot at the end, one removed frees its slot, one whose text or template changed moves to a
/// new slot; once more than half the slots are free the buffer is made again without them.
struct WorkflowSearchIndex {
    private struct Slot {
        /// Where its text starts in ``bytes``, and how many bytes it has.
        var start: Int
        var count: Int
        /// Its template's ordinal in ``templateIds``; -1 for a freed slot.
        var template: Int32
    }

    private var bytes: [UInt8] = []
    private var slots: [Slot] = []
    /// The entry of each slot (nil once freed): slot `i` is `owners[i]`'s, and the entry knows
    /// its slot (``WorkflowEntry/searchSlot``).
    private var owners: [WorkflowEntry?] = []
    /// The templates the workflows come from, each given an ordinal the first time it is seen.
    private var templateIds: [String] = []
    private var templateOrdinals: [String: Int32] = [:]
    private var lastTemplate: (id: String, ordinal: Int32)?
    private var freed = 0

    /// How many workflows it holds.
    var count: Int { slots.count - freed }

    /// How many slots it has, freed ones included: for tests of its compaction.
    var slotCount: Int { slots.count }

    /// Adds `entry`'s text, in a new slot at the end.
    mutating func insert(_ entry: WorkflowEntry) {
        let summary = entry.summary
        let template: Int32
        if let last = lastTemplate, last.id == summary.templateId {
            template = last.ordinal  // most workflows come from the template of the one before
        } else if let known = templateOrdinals[summary.templateId] {
            template = known
        } else {
            template = Int32(templateIds.count)
            templateIds.append(summary.templateId)
            templateOrdinals[summary.templateId] = template
        }
        lastTemplate = (summary.templateId, template)
        let start = bytes.count
        var text = summary.searchText
        text.withUTF8 { bytes.append(contentsOf: $0) }
        TextSearch.foldSigmas(&bytes, from: start)  // a text an earlier version kept may hold ς
        entry.searchSlot = slots.count
        slots.append(Slot(start: start, count: bytes.count - start, template: template))
        owners.append(entry)
    }

    /// Frees `entry`'s slot (nothing if it has none here).
    mutating func remove(_ entry: WorkflowEntry) {
        let i = entry.searchSlot
        guard i >= 0, i < owners.count, owners[i] === entry else { return }
        slots[i].template = -1
        owners[i] = nil
        entry.searchSlot = -1
        freed += 1
        if freed > 32, freed * 2 > slots.count { compact() }
    }

    /// Makes the buffer again with the live slots only, in the same order.
    private mutating func compact() {
        let live = owners.compactMap { $0 }
        bytes.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        owners.removeAll(keepingCapacity: true)
        freed = 0
        for entry in live { insert(entry) }
    }

    /// Every workflow whose text holds one of `needles`' bytes, or whose template
    /// `templateMatches` (asked once per template, only for workflows whose own text does not
    /// match), in slot order. An empty needle matches every workflow.
    func matches(_ needles: [[UInt8]], templateMatches: (String) -> Bool) -> [WorkflowEntry] {
        var found: [WorkflowEntry] = []
        // Per template ordinal: 0 not asked yet, 1 matches, 2 does not.
        var templateAnswers = [UInt8](repeating: 0, count: templateIds.count)
        bytes.withUnsafeBufferPointer { all in
            let base = all.baseAddress
            for i in slots.indices {
                let slot = slots[i]
                guard slot.template >= 0 else { continue }
                let text = UnsafeBufferPointer(start: base.map { $0 + slot.start }, count: slot.count)
                var hit = false
                for needle in needles where needle.withUnsafeBufferPointer({ TextSearch.contains(text, $0) }) {
                    hit = true
                    break
                }
                if !hit {
                    let t = Int(slot.template)
                    if templateAnswers[t] == 0 { templateAnswers[t] = templateMatches(templateIds[t]) ? 1 : 2 }
                    hit = templateAnswers[t] == 1
                }
                if hit, let owner = owners[i] { found.append(owner) }
            }
        }
        return found
    }
}
