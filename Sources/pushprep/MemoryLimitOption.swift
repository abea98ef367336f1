import ArgumentParser
import Logging
import PushPrep
import PushPrepCommandLine
import PushPrepCore

/// `--memory-limit`, shared by `process`, `worker` and `serve`: the budget of estimated peak
/// memory the inputs being decoded at once may add up to (see ``MemoryBudget``).
struct MemoryLimitOption: ParsableArguments {
    /// Below this a budget is surely a mistake (`--memory-limit 500` meant as megabytes): the
    /// process's own baseline is larger.
    static let minimum = 16 << 20

    @Option(
        help: ArgumentHelp(
            "The memory inputs being decoded at once may use, above the process's baseline, by their estimates "
                + "(500MB, 2GiB, 512Mi or bytes; at least 16MiB).",
            discussion: "Default: half of the machine's memory, or of the cgroup's memory.max in a container "
                + "(here \(ByteCountText.describe(MemoryBudget.defaultLimit()))). An input whose estimate is over the "
                + "whole limit waits until nothing else runs and then runs alone, with a warning.",
            valueName: "bytes"))
    var memoryLimit: String?

    /// The limit in bytes, nil for the default; a usage error when it does not parse.
    var bytes: Int? {
        get throws {
            guard let memoryLimit else { return nil }
            return try asUsageError {
                try ByteCountText.bytes(
                    parsing: memoryLimit, option: "--memory-limit", in: Self.minimum...MemoryBudget.maximumLimit)
            }
        }
    }

    func validate() throws {
        _ = try bytes
    }

    /// The budget, reporting to `observer` (made from the limit), logged at `level` with where
    /// it comes from.
    func budget(
        logger: Logger, level: Logger.Level = .info, observer: ((Int) -> any MemoryBudgetObserver)? = nil
    ) throws -> MemoryBudget {
        let limit = try limit(logger: logger, level: level)
        return MemoryBudget(limit: limit, observer: observer?(limit))
    }

    /// The limit in bytes (given, or the default share of this machine's memory), logged at
    /// `level` with where it comes from.
    func limit(logger: Logger, level: Logger.Level = .info) throws -> Int {
        let machine = MachineMemory.current()
        let limit = try bytes ?? MemoryBudget.defaultLimit(of: machine)
        let source =
            memoryLimit != nil
            ? "--memory-limit"
            : "half of \(machine.source) (\(ByteCountText.describe(machine.available)))"
        logger.log(
            level: level, "memory budget",
            metadata: ["bytes": "\(limit)", "limit": "\(ByteCountText.describe(limit))", "from": "\(source)"])
        return limit
    }
}
