import WorkflowCore
import WorkflowStore

extension Engine {
    /// Fires every timer due at or before `target`, in time order (ties: older workflows first;
    /// at one instant workflow timers, then cache timers, then job cancels), moving the call's
    /// clock to each deadline as it fires. Returns how many fired.
    ///
    /// Firing a timer must move its deadline past the instant it fired at. A timer that fires
    /// again and again at one instant would hold the call forever; after
    /// ``maxFiresPerInstant`` such fires the call fails (`WF_EINTERNAL`, `timerStuck`, naming
    /// the timer) and changes nothing. At the latest time there is (`Timestamp.latest`), where
    /// every later deadline falls (OPS §1, Times), a deadline cannot move past it: a chain of
    /// timers may fire there (an await expires, then its retention ends), and a timer due again
    /// past the limit ends the call's firing (logged) rather than failing every later call.
    func fireDue(_ uow: UnitOfWork, upTo target: Timestamp) throws(EngineError) -> Int {
        // What earlier calls of a batch changed is settled first, as it would be had each
        // committed on its own: their deadlines count, and freed slots are filled.
        try settleTouched(uow)
        var fired = 0
        var instant: Timestamp?
        var firesAtInstant: [String: Int] = [:]
        while true {
            let workflowEntry = state.timers.earliest(with: &uow.timers, setAside: &uow.setAsideTimers)
            let cacheEntry = state.cacheTimers.earliest(with: &uow.cacheTimers, setAside: &uow.setAsideCacheTimers)
            var due: (at: Timestamp, key: String, fire: () throws(EngineError) -> Void)?
            switch (workflowEntry, cacheEntry) {
            case let (w?, c?) where w.at <= c.at:
                due = (w.at, "workflow " + w.key, { () throws(EngineError) in try self.fireWorkflowTimers(uow, w.key) })
            case let (_, c?):
                due = (c.at, "cache " + c.key, { () throws(EngineError) in try self.fireCacheTimer(uow, c.key) })
            case let (w?, nil):
                due = (w.at, "workflow " + w.key, { () throws(EngineError) in try self.fireWorkflowTimers(uow, w.key) })
            case (nil, nil):
                due = nil
            }
            if let j = Self.nextJobCancel(uow), due.map({ j.at < $0.at }) ?? true {
                due = (j.at, "cancel of job " + j.jobId, { Self.fireJobCancel(uow, jobId: j.jobId) })
            }
            guard let next = due else { return fired }
            guard next.at <= target else { return fired }
            if next.at != instant {
                instant = next.at
                firesAtInstant.removeAll(keepingCapacity: true)
            }
            let times = firesAtInstant[next.key, default: 0] + 1
            if times > Self.maxFiresPerInstant, next.at == Timestamp.latest {
                uow.log(.warning, "a timer is due again at the latest time; firing ends for this call",
                        ["timer": "\(next.key)"])
                return fired
            }
            guard times <= Self.maxFiresPerInstant else {
                throw EngineError(.internal, "timerStuck",
                                  "the timer of \(next.key) fired \(times - 1) times at \(next.at.rfc3339) without moving on",
                                  details: ["timer": .string(next.key), "at": .string(next.at.rfc3339)])
            }
            firesAtInstant[next.key] = times
            if next.at > uow.now { uow.now = next.at }
            try next.fire()
            fired += 1
            try settleTouched(uow)
        }
    }

    /// How often one timer may fire at one instant before ``fireDue(_:upTo:)`` gives up on it.
    /// A timer that works fires once per instant; the margin is for a timer that another's
    /// firing sets due again at the same instant.
    static let maxFiresPerInstant = 100

    /// When something is next due, considering the call's own changes.
    func nextDeadline(_ uow: UnitOfWork) -> Timestamp? {
        let w = state.timers.earliest(with: &uow.timers, setAside: &uow.setAsideTimers)?.at
        let c = state.cacheTimers.earliest(with: &uow.cacheTimers, setAside: &uow.setAsideCacheTimers)?.at
        return [w, c, Self.nextJobCancel(uow)?.at].compactMap { $0 }.min()
    }
}
