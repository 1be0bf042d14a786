import WorkflowCore

/// Jobs the engine is cancelling that no run holds: a second job the provider accepted for one
/// run (`job.submitted` with another job id), a job accepted for a run of a deleted workflow,
/// and the jobs a deleted workflow had running.
///
/// A cancel of a run's own job that does not reach the provider goes again from the run's
/// record (`Run.nextCancelAt`). These have no run, so the engine keeps them in the store's meta
/// (`jobs.toCancel`, job id → the cancel's effect body, the failures so far, and when it goes
/// again) from the first failure until the provider reports the job over: only Cancel stops a
/// job, and a job left running costs. At most ``UnitOfWork/maxJobsToCancel``; the oldest go
/// first.
extension Engine {
    /// `job.transportError` for `jobId`, which no run holds: if the host was sending its
    /// `remote.cancel` (taken, not answered), that cancel goes again after the reconnect backoff.
    /// Nil when no cancel of the job is on record (the job is unknown).
    static func jobCancelFailed(_ uow: UnitOfWork, jobId: String, error: TransportError) -> JSON? {
        let cancels = uow.effects(answerKey: AnswerKey.cancel(jobId))
        guard let sent = cancels.last else {
            guard let entry = uow.jobsToCancel[jobId]?.objectValue else { return nil }
            return ignored(jobId, time(entry["at"]).map { "its cancel goes again at \($0.rfc3339)" } ?? "its cancel is on its way")
        }
        guard cancels.allSatisfy(\.taken) else { return ignored(jobId, "its cancel is waiting to be taken") }
        uow.settle(answerKey: AnswerKey.cancel(jobId))
        var jobs = uow.jobsToCancel
        let failures = Int(jobs[jobId]?["failures"]?.intValue ?? 0) + 1
        let at = uow.now.adding(seconds: cancelDelay(uow, jobId: jobId, failures: failures,
                                                     retryAfterSeconds: error.retryAfterSeconds))
        jobs[jobId] = ["effect": .object(sent.body), "failures": JSON(failures), "at": .int(at.milliseconds)]
        uow.setJobsToCancel(jobs)
        uow.log(.warning, "cancel did not reach the provider; sending it again", [
            "jobId": "\(jobId)", "attempt": "\(failures)", "reason": "\(error.reason)", "at": "\(at.rfc3339)",
        ])
        return ["applied": true, "jobId": .string(jobId), "nextCancelAt": .string(at.rfc3339)]
    }

    /// The provider reports `jobId` over: nothing is left to cancel. Returns whether the engine
    /// was cancelling it.
    static func jobEnded(_ uow: UnitOfWork, jobId: String) -> Bool {
        var jobs = uow.jobsToCancel
        guard jobs[jobId] != nil else { return false }
        jobs[jobId] = nil
        uow.setJobsToCancel(jobs)
        return true
    }

    /// The earliest job whose cancel is due to go again, and when.
    static func nextJobCancel(_ uow: UnitOfWork) -> (at: Timestamp, jobId: String)? {
        var earliest: (at: Timestamp, jobId: String)?
        for (jobId, entry) in uow.jobsToCancel {
            guard let at = time(entry["at"]) else { continue }
            if earliest.map({ at < $0.at }) ?? true { earliest = (at, jobId) }
        }
        return earliest
    }

    /// Sends `jobId`'s cancel again; offline, it waits another backoff, as a poll does (at the
    /// latest time there is no later moment to wait for, so it goes to the outbox, which holds
    /// remote effects until the network is back).
    static func fireJobCancel(_ uow: UnitOfWork, jobId: String) {
        var jobs = uow.jobsToCancel
        guard var entry = jobs[jobId]?.objectValue else { return }
        if uow.isOnline || uow.now == Timestamp.latest {
            sendJobCancel(uow, jobId: jobId, entry: &entry)
        } else {
            let failures = Int(entry["failures"]?.intValue ?? 1)
            entry["at"] = .int(uow.now.adding(seconds: cancelDelay(uow, jobId: jobId, failures: failures,
                                                                   retryAfterSeconds: nil)).milliseconds)
        }
        jobs[jobId] = .object(entry)
        uow.setJobsToCancel(jobs)
    }

    /// Back online: every cancel waiting to go again goes now.
    static func resumeJobCancels(_ uow: UnitOfWork) {
        var jobs = uow.jobsToCancel
        var changed = false
        for (jobId, value) in jobs {
            guard var entry = value.objectValue, entry["at"] != nil else { continue }
            sendJobCancel(uow, jobId: jobId, entry: &entry)
            jobs[jobId] = .object(entry)
            changed = true
        }
        if changed { uow.setJobsToCancel(jobs) }
    }

    private static func sendJobCancel(_ uow: UnitOfWork, jobId: String, entry: inout JSONObject) {
        entry["at"] = nil
        if uow.effects(answerKey: AnswerKey.cancel(jobId)).isEmpty {
            uow.emit(EffectType.remoteCancel, entry["effect"]?.objectValue ?? ["jobId": .string(jobId)],
                     answerKey: AnswerKey.cancel(jobId))
        }
    }

    private static func cancelDelay(_ uow: UnitOfWork, jobId: String, failures: Int, retryAfterSeconds: Double?) -> Double {
        RetryPolicy.reconnectDelay(failures: failures,
                                   retryAfterSeconds: retryAfterSeconds, seed: uow.settings.seed,
                                   runId: jobId + ":cancel")
    }

    private static func time(_ j: JSON?) -> Timestamp? { j?.intValue.map { Timestamp(milliseconds: $0) } }

    private static func ignored(_ jobId: String, _ why: String) -> JSON {
        ["applied": false, "ignored": .string("job \(jobId) is being cancelled; \(why)"), "jobId": .string(jobId)]
    }
}

extension UnitOfWork {
    /// Jobs the engine is cancelling that no run holds (``Engine/jobCancelFailed(_:jobId:error:)``),
    /// as this call sees them.
    var jobsToCancel: JSONObject { meta[MetaKey.jobsToCancel]?.objectValue ?? state.jobsToCancel }

    /// At most this many are kept; the oldest go first.
    static let maxJobsToCancel = 1_000

    func setJobsToCancel(_ jobs: JSONObject) {
        let kept = jobs.count > Self.maxJobsToCancel
            ? JSONObject(uniqueMembers: Array(jobs.members.suffix(Self.maxJobsToCancel))) : jobs
        setMeta(MetaKey.jobsToCancel, .object(kept))
    }
}
