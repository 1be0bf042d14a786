/// Bipartite matching for `$contains`: can every expected element be given a different actual
/// element among its candidates? (Kuhn's augmenting paths; fixture arrays are small.)
enum Assignment {
    /// `candidates[i]`: indices of the actual elements expected element `i` matches.
    static func exists(candidates: [[Int]]) -> Bool {
        var owner: [Int: Int] = [:]  // actual element -> expected element holding it
        for i in candidates.indices {
            var visited = Set<Int>()
            guard augment(i, candidates, &owner, &visited) else { return false }
        }
        return true
    }

    private static func augment(_ i: Int, _ candidates: [[Int]], _ owner: inout [Int: Int], _ visited: inout Set<Int>) -> Bool {
        for j in candidates[i] where !visited.contains(j) {
            visited.insert(j)
            if let holder = owner[j] {
                guard augment(holder, candidates, &owner, &visited) else { continue }
            }
            owner[j] = i
            return true
        }
        return false
    }
}
