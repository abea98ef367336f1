import Foundation
import PushPrepTestSupport
import Testing

/// An HTML page parsed by Python's `html.parser` (a parser independent of the code that wrote
/// the page): every element with its attributes (entities decoded), its parent and its text
/// content; end tags that close anything but the innermost open element are counted, and so
/// are elements left open, so a test can require well-nested markup. Each `<style>`'s SHA-256
/// is computed by Python too, for checking the page's Content-Security-Policy.
struct ParsedHTML: Decodable {
    struct Node: Decodable {
        var tag: String
        var attrs: [String: String]
        var parent: Int
        var text: String
        /// `sha256-<base64>` of the raw text, for `<style>` and `<script>`.
        var hash: String?

        var classes: Set<String> { Set((attrs["class"] ?? "").split(separator: " ").map(String.init)) }
    }

    var nodes: [Node]
    var mismatched: [String]
    var unclosed: [String]

    static let script = #"""
        import sys, json, hashlib, base64
        from html.parser import HTMLParser
        VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
        class Parser(HTMLParser):
            def __init__(self):
                super().__init__(convert_charrefs=True)
                self.nodes = [{"tag": "#document", "attrs": {}, "parent": -1, "text": ""}]
                self.stack = [0]
                self.mismatched = []
                self.raw = {}
            def add(self, tag, attrs):
                self.nodes.append({"tag": tag, "attrs": {k: (v or "") for k, v in attrs},
                                   "parent": self.stack[-1], "text": ""})
                return len(self.nodes) - 1
            def handle_starttag(self, tag, attrs):
                index = self.add(tag, attrs)
                if tag not in VOID:
                    self.stack.append(index)
            def handle_startendtag(self, tag, attrs):
                self.add(tag, attrs)
            def handle_endtag(self, tag):
                if tag in VOID:
                    return
                if self.nodes[self.stack[-1]]["tag"] != tag:
                    self.mismatched.append(tag)
                for depth in range(len(self.stack) - 1, 0, -1):
                    if self.nodes[self.stack[depth]]["tag"] == tag:
                        del self.stack[depth:]
                        break
            def handle_data(self, data):
                for index in self.stack:
                    self.nodes[index]["text"] += data
        parser = Parser()
        parser.feed(sys.stdin.read())
        parser.close()
        for node in parser.nodes:
            if node["tag"] in ("style", "script"):
                digest = hashlib.sha256(node["text"].encode("utf-8")).digest()
                node["hash"] = "sha256-" + base64.b64encode(digest).decode()
        unclosed = [parser.nodes[i]["tag"] for i in parser.stack[1:]]
        json.dump({"nodes": parser.nodes, "mismatched": parser.mismatched, "unclosed": unclosed}, sys.stdout)
        """#

    /// Parses `html` with `python3`.
    static func parse(_ html: String) throws -> ParsedHTML {
        let result = try TestTools.run(TestTools.python, ["-c", script], stdin: Data(html.utf8))
        guard result.status == 0 else {
            throw TestTools.Failure(description: "the parser failed: " + String(decoding: result.stderr, as: UTF8.self))
        }
        return try JSONDecoder().decode(ParsedHTML.self, from: result.stdout)
    }

    /// The indexes of the elements with `tag` (any when nil), every class in `classes` and the
    /// attribute `attribute` when given, inside the element `within` (the whole page when nil).
    func select(
        _ tag: String? = nil, classes: Set<String> = [], attribute: (String, String?)? = nil, within: Int? = nil
    ) -> [Int] {
        nodes.indices.filter { index in
            let node = nodes[index]
            guard index > 0, tag == nil || node.tag == tag, classes.isSubset(of: node.classes) else { return false }
            if let (name, value) = attribute {
                guard let found = node.attrs[name], value == nil || found == value else { return false }
            }
            return within.map { isInside(index, $0) } ?? true
        }
    }

    /// The one element matching, failing the test when there is not exactly one.
    func one(
        _ tag: String? = nil, classes: Set<String> = [], attribute: (String, String?)? = nil, within: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        let found = select(tag, classes: classes, attribute: attribute, within: within)
        try #require(
            found.count == 1,
            "\(tag ?? "*") \(classes.sorted()) \(attribute.map { "\($0)" } ?? ""): \(found.count) found",
            sourceLocation: sourceLocation)
        return found[0]
    }

    /// Whether `index` is a descendant of `ancestor`.
    func isInside(_ index: Int, _ ancestor: Int) -> Bool {
        var current = nodes[index].parent
        while current >= 0 {
            if current == ancestor { return true }
            current = nodes[current].parent
        }
        return false
    }

    subscript(index: Int) -> Node { nodes[index] }
}
