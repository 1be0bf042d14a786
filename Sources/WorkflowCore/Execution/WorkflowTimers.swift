extension Executor {
    /// The earliest moment something in the workflow is due: a submit retry, a poll, a download
    /// retry, a cancel sent again, an await expiring, a snooze ending, a claim lease running out,
    /// a done await leaving the Action Center. While offline, submit retries and downloads are
    /// held (they wait for `network.set {online: true}`, not for a time), so they are no
    /// deadline; a cancel waits as a poll does (``fireDue(_:)``).
    public func nextDeadline(_ wf: Workflow) -> Timestamp? {
        Self.nextDeadline(wf, online: ctx.isOnline, settings: ctx.settings)
    }

    /// ``nextDeadline(_:)`` with what it reads of the context given: for a caller with no
    /// executor at hand (a workflow's summary; making one looks up its template).
    public static func nextDeadline(_ wf: Workflow, online: Bool, settings: RuleSettings) -> Timestamp? {
        guard wf.mayHoldTimers else { return nil }  // the usual local workflow: no run read
        var earliest: Timestamp?
        func consider(_ t: Timestamp?) {
            guard let t else { return }
            if earliest == nil || t < earliest! { earliest = t }
        }
        for i in wf.runs.indices {
            guard !wf.runs[i].status.isTerminal else {
                consider(wf.runs[i].nextCancelAt)
                continue
            }
            if online {
                consider(wf.runs[i].nextAttemptAt)
                consider(wf.runs[i].nextDownloadAt)
            }
            consider(wf.runs[i].nextPollAt)
        }
        for a in wf.awaits where !a.cleared {
            if a.status == .done {
                consider(a.doneAt?.adding(seconds: settings.doneAwaitRetentionSeconds))
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
    /// ``resumeOnline(_:)``; a due cancel, like a poll, waits another backoff (the workflow may
    /// have no run in flight for ``resumeOnline(_:)`` to find it by), except at the latest time,
    /// where no later moment exists: it goes to the outbox, which holds it while offline.
    public func fireDue(_ wf: inout Workflow) throws(EngineError) {
        let now = ctx.now
        let online = ctx.isOnline
        for r in wf.runs.indices {
            let run = wf.runs[r]
            guard !run.status.isTerminal else {
                if let t = run.nextCancelAt, t <= now {
                    // At the latest time there is no later moment to wait for: it goes to the
                    // outbox, which holds remote effects until the network is back.
                    if online || now == Timestamp.latest {
                        resendCancel(&wf, runIndex: r)
                    } else {
                        wf.runs[r].nextCancelAt = now.adding(seconds: cancelDelay(run, retryAfterSeconds: nil))
                    }
                }
                continue
            }
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

    /// Back online: submit retries and downloads that fell due while offline go now, cancels
    /// waiting to go again go now, and every live job is polled at once (unless the workflow's
    /// polling is paused). Returns whether anything was emitted or rescheduled.
    public func resumeOnline(_ wf: inout Workflow) throws(EngineError) -> Bool {
        let now = ctx.now
        var changed = false
        for r in wf.runs.indices {
            let run = wf.runs[r]
            guard !run.status.isTerminal else {
                if run.nextCancelAt != nil {
                    resendCancel(&wf, runIndex: r)
                    changed = true
                }
                continue
            }
            if run.status == .retryWait, let t = run.nextAttemptAt, t <= now {
                try resubmit(&wf, runIndex: r)
                changed = true
            } else if run.status == .downloading, let t = run.nextDownloadAt, t <= now {
                emitDueDownloads(&wf, runIndex: r)
                changed = true
            } else if run.hasLiveJob, !wf.pollingPaused {
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
    /// network is down) and schedules the next. A poll taken earlier and never answered is
    /// dropped from the record as the new one goes: the job has one poll on record at most, so
    /// a reopen hands out one poll for it, not one per unanswered period.
    public func pollNow(_ wf: inout Workflow, runIndex r: Int) {
        let run = wf.runs[r]
        guard let jobId = run.jobId else { return }
        let onRecord = ctx.effects(answerKey: AnswerKey.poll(run.runId))
        if !onRecord.contains(where: { !$0.taken }), ctx.isOnline {
            if !onRecord.isEmpty { ctx.settle(answerKey: AnswerKey.poll(run.runId)) }
            var body = effectBody(wf, run)
            body["jobId"] = .string(jobId)
            ctx.emit(EffectType.remotePoll, body, answerKey: AnswerKey.poll(run.runId))
        }
        if run.pollFailures > 0 {
            // Reconnecting: keep backing off until an answer arrives.
            let delay = RetryPolicy.reconnectDelay(failures: run.pollFailures, retryAfterSeconds: nil,
                                                   seed: ctx.settings.seed, runId: run.runId)
            wf.runs[r].nextPollAt = pollTime(after: delay)
        } else {
            schedulePoll(&wf, runIndex: r)
        }
    }
}
