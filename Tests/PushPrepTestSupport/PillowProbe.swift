package import Foundation

/// Reads pictures with Pillow, a decoder independent of libvips (`make pyenv` installs it in
/// `.build/pyenv`): what the rendition tests check every Android and web rendition with.
package enum PillowProbe {
    /// What Pillow made of one file.
    package struct Decoded: Equatable, Sendable {
        package let format: String
        package let width: Int
        package let height: Int
    }

    /// Whether `.build/pyenv` has Pillow.
    package static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: MotoS3Server.python),
            let result = try? TestTools.run(MotoS3Server.python, ["-c", "import PIL"], timeout: .seconds(30))
        else { return false }
        return result.status == 0
    }()

    /// Decodes every file fully (`Image.load()`, not only the header) in one Python process;
    /// a file Pillow cannot decode is an error naming it.
    package static func decode(_ files: [URL]) throws -> [URL: Decoded] {
        let script = """
            import sys, json
            from PIL import Image
            out = {}
            for path in sys.argv[1:]:
                with Image.open(path) as image:
                    image.load()
                    out[path] = [image.format, image.width, image.height]
            print(json.dumps(out))
            """
        let data = try TestTools.runChecked(MotoS3Server.python, ["-c", script] + files.map(\.path))
        let decoded = try JSONDecoder().decode([String: [JSONScalar]].self, from: data)
        var result: [URL: Decoded] = [:]
        for file in files {
            guard let values = decoded[file.path], values.count == 3, case .text(let format) = values[0],
                case .number(let width) = values[1], case .number(let height) = values[2]
            else { throw PillowError(file: file.path) }
            result[file] = Decoded(format: format, width: width, height: height)
        }
        return result
    }

    /// A file Pillow gave no answer for.
    struct PillowError: Error, CustomStringConvertible {
        let file: String
        var description: String { "Pillow did not decode \(file)" }
    }

    /// A string or a whole number in Pillow's answer.
    enum JSONScalar: Decodable {
        case text(String)
        case number(Int)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }
}
