import Foundation

/// Folds the journal's entries into the store's tables on a thread of its own.
///
/// A call's commit is durable once its journal entry is: folding is only bookkeeping, and doing
/// it here lets the engine's thread go on with the next call while the rows are written, on the
/// machine's other core. It writes through the store's connection (GRDB's queue serialises the
/// two threads' uses of it, the store's write lock their transactions): a second connection
/// writing the same file would make each drop its whole page cache at its next transaction.
///
/// It waits for ``foldRows`` rows (or ``foldEntries`` entries, or ``foldBytes`` bytes in the
/// journal's file), or for the engine to be quiet for ``idleFold`` with something waiting: a fold
/// per call would write each row as often as the calls change it. Whatever arrives during a fold
/// waits for the next one, so a fold takes the entries of many calls, and a row they all changed
/// is written once: with the default limits, some 850 batched completions, over which a node
/// is queued, started and finished, its run inserted, started and finished, and its workflow's
/// row rewritten a few times. It waits for that many only once the engine's thread has not
/// needed the tables for as many rows (``foldRowsAfterTablesNeeded``). The journal's file is
/// emptied only by an append that finds every entry it holds folded, which a steady load never
/// leaves time for: once the file holds ``foldBytes``, the folder folds again at once whatever
/// came during its fold, and once little is left the engine's thread folds that before its next
/// append (``SQLiteStore/catchUpRows``), which empties the file. Folds the engine's thread made
/// without a sync (in a commit written straight to the tables) are synced once the engine is
/// quiet, so the journal can drop their entries. A fold
/// that fails leaves its entries in the journal (the engine's thread folds them when it must,
/// and reports the failure then; the next open replays them), and the folder tries again after
/// ``retryAfter``; once another engine owns the store it stops.
final class JournalFolder: @unchecked Sendable {
    private let backlog: JournalBacklog
    private let connection: StoreConnection
    /// Rows (each image counted), entries, or bytes of the journal's file that make the folder
    /// start at once.
    let foldRows: Int
    let foldEntries: Int
    let foldBytes: Int
    /// The rows that make it start while the engine's thread needed the tables less than
    /// ``foldRows`` rows ago: what waits when it does is folded on that thread, in the commit
    /// written to the tables or before the read, so a store whose calls often need the tables
    /// (commits the journal does not take: new effects, awaits, workflows) folds as it did with
    /// small folds, and that thread never finds many rows to fold.
    let foldRowsAfterTablesNeeded: Int
    static let idleFold: TimeInterval = 0.1
    static let retryAfter: TimeInterval = 1
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var wanted = false
    private var stopping = false
    private var running = false
    /// An entry arrived, or the engine folded, since the folder last looked.
    private var appended = false
    /// The folder sleeps until something happens (nothing waits to be folded or synced).
    private var sleeping = false
    /// ``hold()`` calls not yet released: no fold starts meanwhile.
    private var holds = 0

    init(backlog: JournalBacklog, connection: StoreConnection, foldRows: Int, foldEntries: Int, foldBytes: Int,
         foldRowsAfterTablesNeeded: Int) {
        self.backlog = backlog
        self.connection = connection
        self.foldRows = max(1, foldRows)
        self.foldEntries = max(1, foldEntries)
        self.foldBytes = max(1, foldBytes)
        self.foldRowsAfterTablesNeeded = max(1, min(foldRows, foldRowsAfterTablesNeeded))
    }

    /// Starts the thread.
    func start() {
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "workflow-store-folder"
        thread.start()
    }

    /// An entry was appended: once ``foldRows`` rows (or ``foldEntries`` entries) are waiting, or
    /// the journal's file holds ``foldBytes``, the folder starts; until then it waits for more, or
    /// for the engine to be quiet.
    func noteAppend() {
        note(due: isDue)
    }

    /// Whether what waits makes the folder start at once.
    var isDue: Bool {
        let c = backlog.counts
        let rows = backlog.rowsSinceTablesNeeded >= foldRows ? foldRows : foldRowsAfterTablesNeeded
        return c.rows >= rows || c.entries >= foldEntries || backlog.fileBytes >= foldBytes
    }

    /// The engine's thread folded the journal without a sync: the folder syncs it once the
    /// engine is quiet.
    func noteUnsyncedFold() {
        note(due: false)
    }

    private func note(due: Bool) {
        condition.lock()
        appended = true
        if due { wanted = true }
        // A folder asleep with nothing to do must learn that there is: it then waits for the
        // engine to be quiet.
        if due || sleeping { condition.signal() }
        condition.unlock()
    }

    /// Starts no fold until ``release()`` (a fold under way finishes): for benchmarks and tests
    /// that need the backlog as full as its limits let it. The engine's thread still folds when
    /// the backlog is full.
    func hold() {
        condition.lock()
        holds += 1
        condition.unlock()
    }

    func release() {
        condition.lock()
        holds -= 1
        if holds == 0 {
            wanted = wanted || isDue
            condition.signal()
        }
        condition.unlock()
    }

    private var isHeld: Bool { condition.withLock { holds > 0 } }

    /// Stops the thread once its current fold is done, and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// Whether there is something to fold or to sync.
    private var hasWork: Bool { !backlog.isEmpty || backlog.unsyncedEntries > 0 }

    private func run() {
        var failed = false
        while true {
            condition.lock()
            if failed {
                // Not again at once: a failure that lasts (a full disk) is not retried in a loop.
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.retryAfter))
                failed = false
            }
            while (!wanted || holds > 0) && !stopping {
                if holds > 0 || !hasWork {
                    sleeping = true
                    condition.wait()
                    sleeping = false
                } else if !condition.wait(until: Date(timeIntervalSinceNow: Self.idleFold)) && !appended {
                    break  // quiet for a while with something to do: do it
                }
                appended = false
            }
            if stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            wanted = false
            condition.unlock()
            do {
                repeat {
                    // Again at once if the engine's thread folded some of them meanwhile.
                    while try !backlog.foldInBackground(on: connection), !backlog.isEmpty {}
                    // And while the journal's file is past its bound: it is emptied by the first
                    // append after a fold that leaves nothing waiting.
                } while !backlog.isEmpty && backlog.fileBytes >= foldBytes && !isHeld
                if backlog.isEmpty, backlog.unsyncedEntries > 0 {
                    backlog.writeLock.lockForFolder()
                    defer { backlog.writeLock.unlock() }
                    try backlog.syncFolded(on: connection)
                }
            } catch let e as StoreError where e.code == "storeInUse" {
                // Another engine owns the store and has taken the journal over.
                condition.lock()
                stopping = true
                condition.unlock()
            } catch {
                failed = true  // left in the journal: see the type's documentation
            }
        }
    }
}
