extension Executor {
    /// The earliest moment something in the workflow is due: a submit retry, a poll, a download
    /// retry, an await expiring, a snooze ending, a claim lease running out, a done await leaving
    /// the Action Center.
    public func nextDeadline(_ wf: Workflow) -> Timestamp? {
        var earliest: Timestamp?
        func consider(_ t: Timestamp?) {
            guard let t else { return }
            if earliest == nil || t < earliest! { earliest = t }
        }
        for i in wf.runs.indices where !wf.runs[i].status.isTerminal {
            consider(wf.runs[i].nextAttemptAt)
            consider(wf.runs[i].nextPollAt)
            consider(wf.runs[i].nextDownloadAt)
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

    /// Fires everything in the workflow due at or before now.
    public func fireDue(_ wf: inout Workflow) throws(EngineError) {
        let now = ctx.now
        for r in wf.runs.indices {
            let run = wf.runs[r]
            guard !run.status.isTerminal else { continue }
            if let t = run.nextAttemptAt, t <= now, run.status == .retryWait {
                try resubmit(&wf, runIndex: r)
            }
            if let t = run.nextPollAt, t <= now, run.status.hasLiveJob {
                pollNow(&wf, runIndex: r)
            }
            if let t = run.nextDownloadAt, t <= now, run.status == .downloading {
                wf.runs[r].nextDownloadAt = nil
                for port in run.pendingDownloads.keys.sorted() { emitDownload(wf, runIndex: r, port: port) }
            }
        }
        try fireAwaitTimers(&wf)
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
