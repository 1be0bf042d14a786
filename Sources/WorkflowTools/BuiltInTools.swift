import WorkflowCore

/// The built-in pure text tools (003 step 2's sample, Text → Uppercase → Append, and Reverse).
/// Each reads and writes `TextRef` assets in `data:` URIs, so they need no files; their previews
/// work on about as much of the text as the preview shows (Reverse on more where characters join
/// once reversed, doubling the piece it reads until it has enough).
public enum BuiltInTools {
    public static let text: [any Tool] = [TextSource(), Uppercase(), Append(), Reverse()]

    static let textPort = [PortSpec(name: "text", type: "TextRef")]

    /// `Text`: makes a text asset from its `text` parameter.
    public struct TextSource: Tool {
        public init() {}
        public var spec: ToolSpec {
            ToolSpec(kind: "Text", title: "Text", description: "Makes a text from its 'text' parameter.",
                     outputs: textPort, defaults: ["text": ""], summaryParams: ["text"])
        }
        public func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
            ["text": TextContent.asset(try invocation.stringParam("text"))]
        }
        public func preview(_ invocation: ToolInvocation) throws -> ToolPreview? {
            .text(String(try invocation.stringParam("text").prefix(ToolPreview.maxTextCharacters + 1)))
        }
    }

    /// `Uppercase`: the input text in capitals.
    public struct Uppercase: Tool {
        public init() {}
        public var spec: ToolSpec {
            ToolSpec(kind: "Uppercase", title: "Uppercase", description: "Writes the text in capitals.",
                     inputs: textPort, outputs: textPort)
        }
        public func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
            ["text": TextContent.asset(try invocation.text("text").uppercased())]
        }
        public func preview(_ invocation: ToolInvocation) throws -> ToolPreview? {
            .text(String(try invocation.text("text").prefix(ToolPreview.maxTextCharacters + 1)).uppercased())
        }
    }

    /// `Append`: the input text followed by the `suffix` parameter.
    public struct Append: Tool {
        public init() {}
        public var spec: ToolSpec {
            ToolSpec(kind: "Append", title: "Append", description: "Adds the 'suffix' parameter after the text.",
                     inputs: textPort, outputs: textPort, defaults: ["suffix": ""], summaryParams: ["suffix"])
        }
        public func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
            ["text": TextContent.asset(try invocation.text("text") + invocation.stringParam("suffix"))]
        }
        public func preview(_ invocation: ToolInvocation) throws -> ToolPreview? {
            let head = try invocation.text("text").prefix(ToolPreview.maxTextCharacters + 1)
            return .text(String((head + (try invocation.stringParam("suffix"))).prefix(ToolPreview.maxTextCharacters + 1)))
        }
    }

    /// `Reverse`: the input text backwards, character by character.
    public struct Reverse: Tool {
        public init() {}
        public var spec: ToolSpec {
            ToolSpec(kind: "Reverse", title: "Reverse", description: "Writes the text backwards.",
                     inputs: textPort, outputs: textPort)
        }
        public func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
            ["text": TextContent.asset(String(try invocation.text("text").reversed()))]
        }
        /// The output's start is the input's end, reversed: enough of it for the preview's
        /// characters and one more (the cut's "…"), plus one, as the last character of a piece
        /// may join with what follows it once reversed (a Hangul vowel after its consonant, a
        /// mark). Characters can join into fewer (jamo into syllables), so the piece grows until
        /// it is long enough or is the whole text.
        public func preview(_ invocation: ToolInvocation) throws -> ToolPreview? {
            let text = try invocation.text("text")
            let needed = ToolPreview.maxTextCharacters + 2
            var take = needed
            while true {
                let piece = text.suffix(take)
                let reversed = String(piece.reversed())
                if piece.startIndex == text.startIndex || reversed.count >= needed {
                    return .text(reversed)
                }
                take *= 2
            }
        }
    }
}
