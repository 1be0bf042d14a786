import WorkflowCore
import WorkflowStore

extension Engine {
    /// Fires every timer due at or before `target`, in time order (ties: older workflows first),
    /// moving the call's clock to each deadline as it fires. Returns how many fired.
    func fireDue(_ uow: UnitOfWork, upTo target: Timestamp) throws(EngineError) -> Int {
        var fired = 0
        while true {
            let workflowEntry = state.timers.earliest(with: &uow.timers, setAside: &uow.setAsideTimers)
            let cacheEntry = state.cacheTimers.earliest(with: &uow.cacheTimers, setAside: &uow.setAsideCacheTimers)
            let next: (at: Timestamp, fire: () throws(EngineError) -> Void)
            switch (workflowEntry, cacheEntry) {
            case let (w?, c?) where w.at <= c.at:
                next = (w.at, { () throws(EngineError) in try self.fireWorkflowTimers(uow, w.key) })
            case let (_, c?):
                next = (c.at, { () throws(EngineError) in try self.fireCacheTimer(uow, c.key) })
            case let (w?, nil):
                next = (w.at, { () throws(EngineError) in try self.fireWorkflowTimers(uow, w.key) })
            case (nil, nil):
                return fired
            }
            guard next.at <= target else { return fired }
            if next.at > uow.now { uow.now = next.at }
            try next.fire()
            fired += 1
            try settleTouched(uow)
            if fired > 10_000_000 { throw .internal("timer loop did not converge") }
        }
    }

    /// When something is next due, considering the call's own changes.
    func nextDeadline(_ uow: UnitOfWork) -> Timestamp? {
        let w = state.timers.earliest(with: &uow.timers, setAside: &uow.setAsideTimers)?.at
        let c = state.cacheTimers.earliest(with: &uow.cacheTimers, setAside: &uow.setAsideCacheTimers)?.at
        switch (w, c) {
        case let (a?, b?): return min(a, b)
        default: return w ?? c
        }
    }
}
