extension Executor {
    /// The earliest moment something in the workflow is due: a submit retry, a poll, a download
    /// retry, an await expiring, a snooze ending, a claim lease running out, a done await leaving
    /// the Action Center. While offline, submit retries and downloads are held (they wait for
    /// `network.set {online: true}`, not for a time), so they are no deadline.
    public func nextDeadline(_ wf: Workflow) -> Timestamp? {
        var earliest: Timestamp?
        func consider(_ t: Timestamp?) {
            guard let t else { return }
            if earliest == nil || t < earliest! { earliest = t }
        }
        let online = ctx.isOnline
        for i in wf.runs.indices where !wf.runs[i].status.isTerminal {
            if online {
                consider(wf.runs[i].nextAttemptAt)
                consider(wf.runs[i].nextDownloadAt)
            }
            consider(wf.runs[i].nextPollAt)
        }
        for a in wf.awaits where !a.cleared {
            if a.status == .done {
                consider(a.doneAt?.adding(seconds: ctx.settings.doneAwaitRetentionSeconds))
            } else {
                consider(a.expiresAt)
                if a.status == .snoozed { consider(a.snoozeUntil) }
                consider(a.claim?.leaseExpiresAt)
            }
        }
        return earliest
    }

    /// Fires everything in the workflow due at or before now. Offline, a due submit retry or
    /// download stays due (no attempt is spent on a network that is known to be down) until
    /// ``resumeOnline(_:)``.
    public func fireDue(_ wf: inout Workflow) throws(EngineError) {
        let now = ctx.now
        let online = ctx.isOnline
        for r in wf.runs.indices {
            let run = wf.runs[r]
            guard !run.status.isTerminal else { continue }
            if online, let t = run.nextAttemptAt, t <= now, run.status == .retryWait {
                try resubmit(&wf, runIndex: r)
            }
            if let t = run.nextPollAt, t <= now, run.status.hasLiveJob {
                pollNow(&wf, runIndex: r)
            }
            if online, let t = run.nextDownloadAt, t <= now, run.status == .downloading {
                emitDueDownloads(&wf, runIndex: r)
            }
        }
        try fireAwaitTimers(&wf)
    }

    /// Back online: submit retries and downloads that fell due while offline go now, and every
    /// live job is polled at once (unless the workflow's polling is paused). Returns whether
    /// anything was emitted or rescheduled.
    public func resumeOnline(_ wf: inout Workflow) throws(EngineError) -> Bool {
        let now = ctx.now
        var changed = false
        for r in wf.runs.indices {
            let run = wf.runs[r]
            guard !run.status.isTerminal else { continue }
            if run.status == .retryWait, let t = run.nextAttemptAt, t <= now {
                try resubmit(&wf, runIndex: r)
                changed = true
            } else if run.status == .downloading, let t = run.nextDownloadAt, t <= now {
                emitDueDownloads(&wf, runIndex: r)
                changed = true
            } else if run.status.hasLiveJob, !wf.pollingPaused {
                pollNow(&wf, runIndex: r)
                changed = true
            }
        }
        return changed
    }

    private func emitDueDownloads(_ wf: inout Workflow, runIndex r: Int) {
        wf.runs[r].nextDownloadAt = nil
        for port in wf.runs[r].pendingDownloads.keys.sorted() { emitDownload(wf, runIndex: r, port: port) }
    }

    /// Emits `remote.poll` for a live job (unless one is already waiting to be taken, or the
    /// network is down) and schedules the next.
    public func pollNow(_ wf: inout Workflow, runIndex r: Int) {
        let run = wf.runs[r]
        guard let jobId = run.jobId else { return }
        let waiting = ctx.effects(answerKey: AnswerKey.poll(run.runId)).contains { !$0.taken }
        if !waiting, ctx.isOnline {
            var body = effectBody(wf, run)
            body["jobId"] = .string(jobId)
            ctx.emit(EffectType.remotePoll, body, answerKey: AnswerKey.poll(run.runId))
        }
        if run.pollFailures > 0 {
            // Reconnecting: keep backing off until an answer arrives.
            let delay = RetryPolicy.reconnectDelay(interval: ctx.settings.pollIntervalSeconds,
                                                   failures: run.pollFailures, retryAfterSeconds: nil,
                                                   seed: ctx.settings.seed, runId: run.runId)
            wf.runs[r].nextPollAt = ctx.now.adding(seconds: delay)
        } else {
            schedulePoll(&wf, runIndex: r)
        }
    }
}
