import Foundation
import WorkflowCore

/// Text carried by an asset URI: `data:` URIs (percent-encoded or `;base64`) and `file:` URIs.
public enum TextContent {
    /// The media type of the text assets the built-in tools make.
    public static let mediaType = "text/plain;charset=utf-8"

    /// A `TextRef` asset holding `text` in a `data:` URI, with its size in bytes.
    public static func asset(_ text: String) -> AssetDraft {
        let encoded = text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        return AssetDraft(type: "TextRef", uri: "data:\(mediaType),\(encoded)", bytes: Int64(text.utf8.count),
                          meta: ["providerSchema": "v1"])
    }

    /// The text behind `uri`, or a ``ToolFailure`` saying why it cannot be read.
    public static func read(_ uri: String) throws -> String {
        if uri.hasPrefix("data:") {
            guard let comma = uri.firstIndex(of: ",") else {
                throw ToolFailure(code: "unreadableInput", message: "The data URI has no ',' before its content.")
            }
            let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
            let body = String(uri[uri.index(after: comma)...])
            if header.hasSuffix(";base64") {
                guard let data = Data(base64Encoded: body), let text = String(data: data, encoding: .utf8) else {
                    throw ToolFailure(code: "unreadableInput", message: "The data URI is not valid base64 UTF-8 text.")
                }
                return text
            }
            guard let text = body.removingPercentEncoding else {
                throw ToolFailure(code: "unreadableInput", message: "The data URI has a malformed percent escape.")
            }
            return text
        }
        if let url = URL(string: uri), url.isFileURL {
            do {
                return try String(contentsOf: url, encoding: .utf8)
            } catch {
                throw ToolFailure(code: "unreadableInput", message: "The file \(url.lastPathComponent) cannot be read as UTF-8 text.",
                                  hint: "Check that the file still exists.")
            }
        }
        throw ToolFailure(code: "unreadableInput", message: "Only data: and file: URIs can be read as text here.",
                          details: ["scheme": .string(String(uri.prefix { $0 != ":" }))])
    }

    private static let unreserved = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
