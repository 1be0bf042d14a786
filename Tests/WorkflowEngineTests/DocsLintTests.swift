import Foundation
import WorkflowCore
import XCTest

/// 003 step 15, docs lint: the Markdown a newcomer reads (README, docs/, the READMEs of bindings,
/// examples and tests) names only paths that exist, and its JSON examples are JSON.
final class DocsLintTests: XCTestCase {
    static var root: URL {
        // Tests/WorkflowEngineTests/DocsLintTests.swift → <package>
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Every Markdown file of the repository outside build folders.
    static func markdownFiles() -> [URL] {
        let skip: Set<String> = ["build", "node_modules"]
        var out: [URL] = []
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey])
        while let url = walker?.nextObject() as? URL {
            let name = url.lastPathComponent
            if skip.contains(name) || (name.hasPrefix(".") && name != ".ci") {  // hidden: caches, virtualenvs, .build*
                walker?.skipDescendants()
                continue
            }
            if url.pathExtension == "md" { out.append(url) }
        }
        return out.sorted { $0.path < $1.path }
    }

    func testTheDocsAreFound() {
        let names = Set(Self.markdownFiles().map { $0.path.replacingOccurrences(of: Self.root.path + "/", with: "") })
        for expected in ["README.md", "docs/OPS.md", "docs/ARCHITECTURE.md", "docs/BENCHMARKS.md", "bindings/python/README.md"] {
            XCTAssertTrue(names.contains(expected), "\(expected) not among \(names.sorted())")
        }
    }

    /// `Sources/WorkflowCore/Execution/Executor.swift`, `scripts/test`, `docs/OPS.md` … in
    /// backticks: each exists (a `:line` or `#anchor` suffix is ignored; patterns with `*`, `<…>`
    /// or `…` are not paths).
    func testEveryRepositoryPathTheDocsNameExists() throws {
        let pattern = try NSRegularExpression(pattern: "`((?:Sources|docs|scripts|include|Tests|examples|bindings|cmake|Fuzz|\\.ci)/[^`\\s]*)`")
        var checked = 0
        for file in Self.markdownFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            let ns = text as NSString
            for match in pattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
                var path = ns.substring(with: match.range(at: 1))
                if path.contains("*") || path.contains("<") || path.contains("…") { continue }
                if let cut = path.firstIndex(where: { $0 == ":" || $0 == "#" }) { path = String(path[..<cut]) }
                checked += 1
                let fromRoot = Self.root.appendingPathComponent(path).path
                let fromHere = file.deletingLastPathComponent().appendingPathComponent(path).path
                XCTAssertTrue(FileManager.default.fileExists(atPath: fromRoot) || FileManager.default.fileExists(atPath: fromHere),
                              "\(file.lastPathComponent) names `\(path)`, which does not exist")
            }
        }
        XCTAssertGreaterThan(checked, 10, "the docs name repository paths; the pattern found too few")
    }

    /// Every ```json block parses. Examples may elide with `…` (`[…]`, `{…}`, `, …`); a block is
    /// one value, or several, each starting at column 0 and continued on indented lines.
    func testEveryJSONExampleInTheDocsParses() throws {
        var checked = 0
        for file in Self.markdownFiles() {
            let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
            var i = 0
            while i < lines.count {
                guard lines[i].trimmingCharacters(in: .whitespaces) == "```json" else {
                    i += 1
                    continue
                }
                let start = i + 1
                var end = start
                while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
                let block = Array(lines[start..<min(end, lines.count)])
                let whole = block.joined(separator: "\n")
                let values = (try? JSON(parsing: Self.unelided(whole))) != nil ? [(0, whole)] : Self.values(block)
                for (offset, value) in values {
                    checked += 1
                    XCTAssertNoThrow(try JSON(parsing: Self.unelided(value)),
                                     "\(file.lastPathComponent):\(start + offset + 1): not JSON:\n\(value)")
                }
                i = end + 1
            }
        }
        XCTAssertGreaterThan(checked, 50, "the docs have JSON examples; the scan found too few")
    }

    /// The values of a block: a new one starts at each line that begins at column 0.
    static func values(_ lines: [String]) -> [(offset: Int, text: String)] {
        var out: [(Int, String)] = []
        for (k, line) in lines.enumerated() where !line.isEmpty {
            if let first = line.first, !first.isWhitespace || out.isEmpty {
                out.append((k, line))
            } else {
                out[out.count - 1].1 += "\n" + line
            }
        }
        return out
    }

    /// `…` elisions removed: `[…]` → `[]`, `{…}` → `{}`, `, …` and `…,` dropped.
    static func unelided(_ text: String) -> String {
        var t = text.replacingOccurrences(of: "[…]", with: "[]").replacingOccurrences(of: "{…}", with: "{}")
        t = t.replacingOccurrences(of: #",\s*…"#, with: "", options: .regularExpression)
        return t.replacingOccurrences(of: #"…\s*,"#, with: "", options: .regularExpression)
    }
}
