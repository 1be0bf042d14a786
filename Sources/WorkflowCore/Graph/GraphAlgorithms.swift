import HeapModule

/// Graph algorithms over nodes numbered 0..<count, with edges as (from, to) index pairs.
public enum GraphAlgorithms {
    /// Kahn's algorithm with ties broken by node number, so the order is deterministic and follows
    /// the template where the graph allows. Returns nil when the graph has a cycle.
    public static func topologicalOrder(count: Int, edges: [(Int, Int)]) -> [Int]? {
        // Successors in one flat array (compressed rows): no array per node.
        var indegree = [Int](repeating: 0, count: count)
        var start = [Int](repeating: 0, count: count + 1)
        for (a, b) in edges {
            start[a + 1] += 1
            indegree[b] += 1
        }
        for i in 0..<count { start[i + 1] += start[i] }
        var fill = start
        var successors = [Int](repeating: 0, count: edges.count)
        for (a, b) in edges {
            successors[fill[a]] = b
            fill[a] += 1
        }
        var ready = Heap<Int>()
        for i in 0..<count where indegree[i] == 0 { ready.insert(i) }
        var order: [Int] = []
        order.reserveCapacity(count)
        while let n = ready.popMin() {
            order.append(n)
            for k in start[n]..<start[n + 1] {
                let s = successors[k]
                indegree[s] -= 1
                if indegree[s] == 0 { ready.insert(s) }
            }
        }
        return order.count == count ? order : nil
    }

    /// One simple cycle per strongly connected component that has one (a self-loop counts), each
    /// as a closed path `[a, b, ..., a]` starting at the component's lowest node number.
    /// Components are reported in order of their lowest node number.
    public static func cycles(count: Int, edges: [(Int, Int)]) -> [[Int]] {
        var successors = [[Int]](repeating: [], count: count)
        var selfLoop = [Bool](repeating: false, count: count)
        for (a, b) in edges {
            successors[a].append(b)
            if a == b { selfLoop[a] = true }
        }
        for i in 0..<count { successors[i].sort() }
        let components = stronglyConnectedComponents(count: count, successors: successors)
        var result: [[Int]] = []
        for component in components {
            let start = component.min()!
            if component.count == 1 {
                if selfLoop[start] { result.append([start, start]) }
                continue
            }
            let members = Set(component)
            // Breadth-first search from start back to start inside the component: a shortest cycle.
            var parent: [Int: Int] = [:]
            var queue = [start]
            var head = 0
            var closing: Int?
            search: while head < queue.count {
                let n = queue[head]
                head += 1
                for s in successors[n] where members.contains(s) {
                    if s == start {
                        closing = n
                        break search
                    }
                    if parent[s] == nil {
                        parent[s] = n
                        queue.append(s)
                    }
                }
            }
            guard let last = closing else { continue }
            var path = [last]
            var cursor = last
            while cursor != start, let p = parent[cursor] {
                path.append(p)
                cursor = p
            }
            path.reverse()
            if path.first != start { path.insert(start, at: 0) }
            path.append(start)
            result.append(path)
        }
        return result.sorted { $0[0] < $1[0] }
    }

    /// Tarjan's algorithm, iterative (no recursion limit on large graphs).
    static func stronglyConnectedComponents(count: Int, successors: [[Int]]) -> [[Int]] {
        var index = [Int](repeating: -1, count: count)
        var lowlink = [Int](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var stack: [Int] = []
        var components: [[Int]] = []
        var nextIndex = 0
        for root in 0..<count where index[root] == -1 {
            var work: [(node: Int, child: Int)] = [(root, 0)]
            index[root] = nextIndex
            lowlink[root] = nextIndex
            nextIndex += 1
            stack.append(root)
            onStack[root] = true
            while !work.isEmpty {
                let (v, i) = work[work.count - 1]
                if i < successors[v].count {
                    work[work.count - 1].child += 1
                    let w = successors[v][i]
                    if index[w] == -1 {
                        index[w] = nextIndex
                        lowlink[w] = nextIndex
                        nextIndex += 1
                        stack.append(w)
                        onStack[w] = true
                        work.append((w, 0))
                    } else if onStack[w] {
                        lowlink[v] = min(lowlink[v], index[w])
                    }
                } else {
                    work.removeLast()
                    if let parent = work.last?.node { lowlink[parent] = min(lowlink[parent], lowlink[v]) }
                    if lowlink[v] == index[v] {
                        var component: [Int] = []
                        while true {
                            let w = stack.removeLast()
                            onStack[w] = false
                            component.append(w)
                            if w == v { break }
                        }
                        components.append(component)
                    }
                }
            }
        }
        return components
    }

    /// Every node reachable from `starts` (excluding the starts themselves unless reachable).
    public static func descendants(of starts: [Int], successors: [[Int]]) -> Set<Int> {
        var seen = Set<Int>()
        var stack = starts
        while let n = stack.popLast() {
            for s in successors[n] where !seen.contains(s) {
                seen.insert(s)
                stack.append(s)
            }
        }
        return seen
    }
}
