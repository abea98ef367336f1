import Foundation

extension ProcessingSettings {
    /// One setting, declared once (see ``ProcessingSettings/Declared``): its JSON key, its CLI
    /// option, its help, its default and the values it accepts. The JSON coding, the validation
    /// and the CLI's options are made from these, not spelled again for each.
    public struct Setting<Value: Codable & Sendable>: Sendable {
        /// The property.
        let keyPath: any WritableKeyPath<ProcessingSettings, Value> & Sendable
        /// The key in JSON (manifests, queued jobs): the property's name.
        public let key: String
        /// The CLI option's long name, without the dashes; error messages name it too.
        public let option: String
        /// The value when neither the CLI nor the JSON gives one.
        public let defaultValue: Value
        /// What the setting does, one or more sentences.
        let summary: String
        /// The values it accepts, or nil when its type says it all.
        let accepted: Accepted<Value>?

        init(
            _ keyPath: any WritableKeyPath<ProcessingSettings, Value> & Sendable, key: String, option: String,
            default defaultValue: Value, help summary: String, accepts accepted: Accepted<Value>? = nil
        ) {
            self.keyPath = keyPath
            self.key = key
            self.option = option
            self.defaultValue = defaultValue
            self.summary = summary
            self.accepted = accepted
        }

        /// The CLI help: what the setting does, then what it accepts, in the words of the error
        /// a value outside would get.
        public var help: String { help(summary: summary) }

        /// The CLI help of a command that says what the setting does in its own words (`enqueue`'s
        /// `--base-url` is the worker's out directory), then what it accepts.
        public func help(summary: String) -> String {
            guard let accepted else { return summary }
            return "\(summary) Must be \(accepted.text)."
        }
    }

    /// The values a setting accepts, and the words for them that follow "must be" in its help
    /// and in the error for a value outside them.
    public struct Accepted<Value: Sendable>: Sendable {
        /// "between 16 and 16384", "in (0, 3600]".
        let text: String
        /// Throws `invalid_settings` for a value outside; `option` names the setting's CLI option.
        let check: @Sendable (_ value: Value, _ option: String) throws(PushPrepError) -> Void

        /// The values for which `accepts` holds; a value outside is refused with "--OPTION must
        /// be TEXT, got VALUE".
        static func values(_ text: String, _ accepts: @escaping @Sendable (Value) -> Bool) -> Self {
            Accepted(text: text) { (value, option) throws(PushPrepError) in
                guard accepts(value) else {
                    throw PushPrepError(.invalidSettings, "--\(option) must be \(text), got \(value)")
                }
            }
        }
    }

    /// A declared setting whatever its type: what the JSON coding, the validation and the tests
    /// do with each one in ``Declared/all``.
    package protocol AnySetting: Sendable {
        var key: String { get }
        var option: String { get }
        var help: String { get }
        /// Its value in `settings`.
        func value(in settings: ProcessingSettings) -> any Sendable
        /// Reads its key into `settings` when present and not null.
        func decode(from container: KeyedDecodingContainer<CodingKeys>, into settings: inout ProcessingSettings) throws
        /// Writes its key from `settings` (nil as null).
        func encode(_ settings: ProcessingSettings, into container: inout KeyedEncodingContainer<CodingKeys>) throws
        /// Throws `invalid_settings` when its value in `settings` is not accepted.
        func validate(_ settings: ProcessingSettings) throws(PushPrepError)
    }

    /// A declared setting's JSON key (``Setting/key``).
    package struct CodingKeys: CodingKey {
        package let stringValue: String
        package var intValue: Int? { nil }

        package init(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }

    /// One setting in a fingerprint: its label there and its value as text.
    struct FingerprintField: Sendable {
        let label: String
        let text: @Sendable (ProcessingSettings) -> String
    }
}

extension ProcessingSettings.Setting: ProcessingSettings.AnySetting {
    package func value(in settings: ProcessingSettings) -> any Sendable { settings[keyPath: keyPath] }

    package func decode(
        from container: KeyedDecodingContainer<ProcessingSettings.CodingKeys>, into settings: inout ProcessingSettings
    ) throws {
        if let value = try container.decodeIfPresent(Value.self, forKey: .init(stringValue: key)) {
            settings[keyPath: keyPath] = value
        }
    }

    package func encode(
        _ settings: ProcessingSettings, into container: inout KeyedEncodingContainer<ProcessingSettings.CodingKeys>
    ) throws {
        try container.encode(settings[keyPath: keyPath], forKey: .init(stringValue: key))
    }

    package func validate(_ settings: ProcessingSettings) throws(PushPrepError) {
        try accepted?.check(settings[keyPath: keyPath], option)
    }
}

extension ProcessingSettings.Setting where Value: CustomStringConvertible {
    /// This setting in a fingerprint, under `label` (its JSON key unless given), its value
    /// written as `description` (`15.0` for a Double, so that the ids stay what they were).
    func field(_ label: String? = nil) -> ProcessingSettings.FingerprintField {
        let keyPath = keyPath
        return ProcessingSettings.FingerprintField(label: label ?? key) { $0[keyPath: keyPath].description }
    }
}

extension ProcessingSettings.Accepted where Value == Int {
    /// `range`, "between 16 and 16384", with a `note` on the upper bound in parentheses.
    static func between(_ range: ClosedRange<Int>, _ note: String? = nil) -> Self {
        values("between \(range.lowerBound) and \(range.upperBound)" + (note.map { " (\($0))" } ?? "")) {
            range.contains($0)
        }
    }
}

extension ProcessingSettings.Accepted where Value == Double {
    /// `range`, whose bounds are whole numbers: "in 0...86400 seconds".
    static func within(_ range: ClosedRange<Double>, _ unit: String? = nil) -> Self {
        values("in \(Int(range.lowerBound))...\(Int(range.upperBound))" + (unit.map { " \($0)" } ?? "")) {
            range.contains($0)
        }
    }

    /// More than 0 and at most `upper`, a whole number: "in (0, 3600]".
    static func positive(atMost upper: Double, _ unit: String? = nil) -> Self {
        values("in (0, \(Int(upper))]" + (unit.map { " \($0)" } ?? "")) { $0 > 0 && $0 <= upper }
    }
}
