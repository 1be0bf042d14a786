import Foundation
import WorkflowCore
import WorkflowEngine
import XCTest

/// docs/OPS.md is the op reference hosts work from, so it must name exactly the ops the engine
/// has, with exactly the arguments each op takes.
///
/// Format the test relies on (see the top of OPS.md):
/// - every op has one section whose heading is the op name alone in backticks: "### `clock.now`";
/// - inside that section, either the line "Arguments: none." or a table whose header row starts
///   with "| argument |" and whose rows start with the argument name in backticks: "| `seconds` |".
final class OpsDocumentationTests: XCTestCase {
    /// One op section of OPS.md.
    struct Section {
        var op: String
        var line: Int
        /// nil when the section has neither an argument table nor "Arguments: none."
        var arguments: [String]?
    }

    static var opsPath: URL {
        // Tests/WorkflowEngineTests/OpsDocumentationTests.swift → <package>/docs/OPS.md
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs").appendingPathComponent("OPS.md")
    }

    static func loadSections(file: StaticString = #filePath, line: UInt = #line) throws -> [Section] {
        let path = opsPath.path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("docs/OPS.md not found at \(path)", file: file, line: line)
            return []
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return parse(text)
    }

    /// The op name of a heading line "### `op.name`", else nil.
    static func opHeading(_ line: Substring) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("### `"), trimmed.hasSuffix("`") else { return nil }
        let name = trimmed.dropFirst("### `".count).dropLast()
        guard !name.isEmpty, !name.contains("`"), !name.contains(" ") else { return nil }
        return String(name)
    }

    static func parse(_ text: String) -> [Section] {
        var sections: [Section] = []
        var inFence = false
        var inArgumentTable = false
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            if line.hasPrefix("#") {
                inArgumentTable = false
                if let op = opHeading(raw) {
                    sections.append(Section(op: op, line: i + 1, arguments: nil))
                } else if line.hasPrefix("## ") || line.hasPrefix("### ") || line.hasPrefix("# ") {
                    // Any other heading of the same or a higher level ends the op's section.
                    sections.append(Section(op: "", line: i + 1, arguments: nil))
                }
                continue
            }
            guard let last = sections.indices.last, !sections[last].op.isEmpty else { continue }
            if line == "Arguments: none." {
                sections[last].arguments = sections[last].arguments ?? []
                continue
            }
            if line.hasPrefix("| argument |") {
                inArgumentTable = true
                sections[last].arguments = sections[last].arguments ?? []
                continue
            }
            if inArgumentTable {
                guard line.hasPrefix("|") else {
                    inArgumentTable = false
                    continue
                }
                let cell = line.dropFirst().trimmingCharacters(in: .whitespaces)
                guard cell.hasPrefix("`") else { continue }  // the |---| separator row
                let name = cell.dropFirst().prefix { $0 != "`" }
                sections[last].arguments?.append(String(name))
            }
        }
        return sections.filter { !$0.op.isEmpty }
    }

    func testEveryOpHasASection() throws {
        let documented = Set(try Self.loadSections().map(\.op))
        let missing = Engine.opNames.filter { !documented.contains($0) }
        XCTAssertEqual(missing, [], "ops without a \"### `op`\" section in docs/OPS.md: \(missing.joined(separator: ", "))")
    }

    func testNoSectionDocumentsAnOpThatDoesNotExist() throws {
        let ops = Set(Engine.opNames)
        let extra = try Self.loadSections().filter { !ops.contains($0.op) }
        XCTAssertEqual(extra.map(\.op), [],
                       "docs/OPS.md documents ops the engine does not have: "
                           + extra.map { "\($0.op) (line \($0.line))" }.joined(separator: ", "))
    }

    func testNoOpIsDocumentedTwice() throws {
        var seen: [String: Int] = [:]
        var twice: [String] = []
        for s in try Self.loadSections() {
            if let first = seen[s.op] { twice.append("\(s.op) (lines \(first) and \(s.line))") } else { seen[s.op] = s.line }
        }
        XCTAssertEqual(twice, [], "ops with more than one section: \(twice.joined(separator: ", "))")
    }

    /// The argument table of every op lists exactly the arguments the op accepts. The engine says
    /// which those are: an undeclared argument is refused with `unknownArgument`, and
    /// `details.known` lists the declared ones (the check happens before the op runs, so probing
    /// changes nothing).
    func testArgumentTablesMatchTheDeclaredArguments() throws {
        let engine = try Engine(configJSON: ["clock": ["mode": "manual"]])
        defer { engine.close() }
        let sections = Dictionary(try Self.loadSections().map { ($0.op, $0) }, uniquingKeysWith: { a, _ in a })
        for op in Engine.opNames {
            guard let section = sections[op] else { continue }  // reported by testEveryOpHasASection
            guard case .failure(let error) = engine.call(op, ["\u{1}probe": .int(0)]), error.code == "unknownArgument"
            else {
                XCTFail("\(op): an undeclared argument was not refused with unknownArgument")
                continue
            }
            let declared = (error.details["known"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
            guard let documented = section.arguments else {
                XCTFail("\(op) (docs/OPS.md line \(section.line)): no argument table and no \"Arguments: none.\"; "
                            + "it takes \(declared)")
                continue
            }
            XCTAssertEqual(documented.sorted(), declared,
                           "\(op) (docs/OPS.md line \(section.line)): documented arguments differ from the declared ones")
        }
    }

    /// DESIGN §5: "only the transitions in the table are legal". The table hosts read is OPS §14's
    /// "Legal transitions"; the engine enforces `NodeStateMachine.transitions`. Both must list the
    /// same moves (staying in a state is always legal, and left out of both comparisons), so a
    /// move added to the code without the contract, or the other way round, fails here.
    func testTheDocumentedTransitionTableIsTheStateMachine() throws {
        let text = try String(contentsOfFile: Self.opsPath.path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("Legal transitions") }),
              let header = lines[start...].firstIndex(where: { $0.hasPrefix("| from | to |") }) else {
            return XCTFail("docs/OPS.md has no \"Legal transitions\" table")
        }
        func states(_ cell: Substring) -> [NodeState] {
            // Backticked names only: the parenthesised notes between them are prose.
            cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.compactMap { NodeState(rawValue: String($0.element)) }
        }
        var documented: [NodeState: Set<NodeState>] = [:]
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst()
            guard cells.count >= 2 else { continue }
            let to = Set(states(cells[cells.startIndex + 1]))
            for from in states(cells[cells.startIndex]) { documented[from, default: []].formUnion(to) }
        }
        for state in NodeState.allCases {
            let code = (NodeStateMachine.transitions[state] ?? []).subtracting([state])
            let doc = (documented[state] ?? []).subtracting([state])
            XCTAssertEqual(code.map(\.rawValue).sorted(), doc.map(\.rawValue).sorted(),
                           "\(state.rawValue): NodeStateMachine.transitions and docs/OPS.md's table differ")
        }
    }
}
