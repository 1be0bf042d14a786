/// Retry and backoff rules for remote work (DESIGN §5, TEST PLAN §5).
public enum RetryPolicy {
    /// Waits before automatic submit retries 1, 2 and 3: 30 s, 2 min, 8 min.
    public static let submitDelays: [Double] = [30, 120, 480]
    public static let submitJitter = 0.25
    public static var maxSubmitRetries: Int { submitDelays.count }

    /// Polls every interval ±10 %.
    public static let pollJitter = 0.10
    /// Transport errors while polling back off from 10 s, doubling, capped at 5 min (DESIGN §5),
    /// whatever the poll interval: a host that polls rarely still hears of a recovery soon, and
    /// one that polls often does not press a provider that is down.
    public static let reconnectBaseSeconds: Double = 10
    public static let reconnectCapSeconds: Double = 300

    public enum SubmitFailure: Equatable {
        /// Wait, then submit again (same idempotency key).
        case retry(afterSeconds: Double)
        /// Give up: the node fails with this error.
        case fail(NodeError)
    }

    /// What to do after submit failure number `failures` (1 for the first).
    ///
    /// 5xx, timeouts (no status) and offline are transient: 30 s, 2 min, 8 min, each ±25 %, then
    /// the node fails with a cooldown reason. 429 waits `Retry-After` first (and counts as one of
    /// the retries); any other 4xx fails at once.
    public static func afterSubmitFailure(httpStatus: Int?, retryAfterSeconds: Double?, offline: Bool,
                                          failures: Int, seed: UInt64, runId: String) -> SubmitFailure {
        if let status = httpStatus, isPermanent(status) {
            return .fail(NodeError(
                code: "providerRejected", message: "The provider rejected the job (HTTP \(status)).",
                hint: status == 401 || status == 403 ? "Check the API key." : "Check the parameters and inputs.",
                details: ["httpStatus": JSON(status)]))
        }
        guard failures <= maxSubmitRetries else {
            return .fail(retriesExhausted(httpStatus: httpStatus, offline: offline))
        }
        if let retryAfterSeconds, retryAfterSeconds >= 0 {
            return .retry(afterSeconds: retryAfterSeconds)
        }
        let base = submitDelays[failures - 1]
        let factor = Jitter.factor(seed: seed, key: "submit:\(runId)", attempt: failures, spread: submitJitter)
        return .retry(afterSeconds: base * factor)
    }

    /// The error of the transient submit failure after the last automatic retry: always
    /// `providerUnavailable` with a cooldown hint (DESIGN §5), its message and hint naming what the
    /// last failure was (as ``TransportError/reason`` does: an HTTP status first, then offline,
    /// else no answer), so that a device that was offline is not told the provider is overloaded.
    /// `details`: `retries`, and the last failure's `httpStatus`, or `offline: true`.
    static func retriesExhausted(httpStatus: Int?, offline: Bool) -> NodeError {
        let retries = maxSubmitRetries
        var details: JSONObject = ["retries": JSON(retries)]
        let message: String
        let hint: String
        if let httpStatus {
            details["httpStatus"] = JSON(httpStatus)
            message = "The provider did not accept the job after \(retries) automatic retries."
            hint = "The service may be overloaded; wait a few minutes (cooldown), then Retry."
        } else if offline {
            details["offline"] = true
            message = "The job could not be sent to the provider after \(retries) automatic retries: the device was offline."
            hint = "Check the connection, then wait a few minutes (cooldown) and Retry."
        } else {
            message = "The provider did not answer after \(retries) automatic retries."
            hint = "The service may be overloaded or unreachable; wait a few minutes (cooldown), then Retry."
        }
        return NodeError(code: "providerUnavailable", message: message, hint: hint, details: details)
    }

    /// Whether an HTTP status says that asking again will not help: a 4xx other than 408
    /// (Request Timeout) and 429 (Too Many Requests). A submit answered so fails at once, and so
    /// does a download.
    public static func isPermanent(_ httpStatus: Int) -> Bool {
        (400..<500).contains(httpStatus) && httpStatus != 408 && httpStatus != 429
    }

    /// The next regular poll: the interval ±10 %.
    public static func pollDelay(interval: Double, seed: UInt64, runId: String, pollNumber: Int) -> Double {
        interval * Jitter.factor(seed: seed, key: "poll:\(runId)", attempt: pollNumber, spread: pollJitter)
    }

    /// After transport error number `failures` while polling ("Reconnecting…"): 10 s, doubling,
    /// capped at 5 min, ±10 %. A `Retry-After` is used instead of the computed wait, but the cap
    /// holds for it too: a live job is checked at least every 5 min, whatever the provider asked
    /// (DESIGN §5, "back off from 10 s to a 5 min cap"; a finished job is not left unnoticed for
    /// the up to 7 days a `Retry-After` may ask). Never gives up on a live job. Downloads and
    /// cancels that fail back off the same way.
    public static func reconnectDelay(failures: Int, retryAfterSeconds: Double?, seed: UInt64, runId: String) -> Double {
        if let retryAfterSeconds, retryAfterSeconds >= 0 { return min(retryAfterSeconds, reconnectCapSeconds) }
        let exponent = Double(min(max(failures - 1, 0), 30))
        let jittered = reconnectBaseSeconds * pow2(exponent)
            * Jitter.factor(seed: seed, key: "reconnect:\(runId)", attempt: failures, spread: pollJitter)
        return min(jittered, reconnectCapSeconds)  // the cap holds, jitter included
    }

    static func pow2(_ e: Double) -> Double {
        var v = 1.0
        var i = 0.0
        while i < e {
            v *= 2
            i += 1
        }
        return v
    }
}
