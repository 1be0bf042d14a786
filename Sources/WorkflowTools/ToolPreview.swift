import Foundation
import WorkflowCore

/// A small preview of a tool's result for a card thumbnail: a media type and at most
/// ``maxBytes`` bytes. Two previews are equal exactly when their bytes and media type are.
public struct ToolPreview: Sendable, Equatable {
    /// Previews are for thumbnails: never more than this many bytes.
    public static let maxBytes = 1024
    /// Text previews keep at most this many characters (an ellipsis marks the cut).
    public static let maxTextCharacters = 80

    public var mediaType: String
    public private(set) var bytes: [UInt8]

    /// A preview of `bytes`; longer data is cut to ``maxBytes``.
    public init(mediaType: String, bytes: [UInt8]) {
        self.mediaType = mediaType
        self.bytes = Array(bytes.prefix(Self.maxBytes))
    }

    /// A text preview: the first ``maxTextCharacters`` characters, "…" where the text was cut.
    public static func text(_ text: String) -> ToolPreview {
        var shown = text
        if text.count > maxTextCharacters {
            shown = String(text.prefix(maxTextCharacters - 1)) + "…"
        }
        var bytes = Array(shown.utf8)
        if bytes.count > maxBytes {
            // Whole characters only, as many as fit before the ellipsis (3 bytes): never inside
            // a UTF-8 sequence, nor between the scalars of one character (an emoji sequence
            // joined by zero-width joiners, a letter and its accents).
            var kept = ""
            var used = 0
            for character in shown {
                let size = character.utf8.count
                if used + size > maxBytes - 3 { break }
                kept.append(character)
                used += size
            }
            bytes = Array((kept + "…").utf8)
        }
        return ToolPreview(mediaType: "text/plain; charset=utf-8", bytes: bytes)
    }

    /// The preview's text when it is a text preview.
    public var text: String? {
        mediaType.hasPrefix("text/") ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// `{mediaType, text}` for text previews, `{mediaType, base64}` otherwise.
    public var json: JSON {
        if let text { return ["mediaType": .string(mediaType), "text": .string(text)] }
        return ["mediaType": .string(mediaType), "base64": .string(Data(bytes).base64EncodedString())]
    }
}
