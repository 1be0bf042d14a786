import Foundation

/// Timing helpers: figures are medians of repeated runs, reported as ratios against a baseline
/// measured in the same run (machines are shared and noisy).
enum Measure {
    /// Median wall time in seconds of `repeats` runs of `body` (after one warm-up).
    static func median(repeats: Int, _ body: () throws -> Void) rethrows -> Double {
        try body()
        var samples: [Double] = []
        for _ in 0..<repeats {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
    static func us(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }

    /// CPU time (user and system) this process has used so far, in seconds: steadier than wall
    /// time on a shared machine, for figures per unit of work.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// CPU time the calling thread has used so far, in seconds: the engine's own thread, without
    /// the store's folder (which runs beside it, on another core).
    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    static func verdict(_ ok: Bool) -> String { ok ? "meets goal" : "MISSES goal" }

    /// The p-th percentile (0…100) of samples.
    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let i = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
        return sorted[i]
    }
}
