import Foundation
public import Logging
public import PushPrepCore
import PushPrepMedia
import PushPrepPayload
public import PushPrepRemote

extension Inspector {
    /// Inspects files and URLs: a URL is fetched (with every rule of ``RemoteFetcher``) into a
    /// temporary directory, inspected like a file, and removed. Reports are in input order.
    public static func inspect(
        _ items: [InputItem], settings: ProcessingSettings, remote: RemoteSettings, logger: Logger
    ) async -> [InspectReport] {
        guard items.contains(where: \.isRemote) else { return items.map { inspect($0, settings: settings) } }
        let fetcher = RemoteFetcher(settings: remote, logger: logger)
        let scratch: String
        do {
            scratch = try Directories.scratch("inspect")
        } catch {
            await fetcher.shutdown()
            return items.map { $0.isRemote ? failed($0, error) : inspect($0, settings: settings) }
        }
        var reports = [InspectReport?](repeating: nil, count: items.count)
        await withTaskGroup(of: (Int, InspectReport).self) { group in
            var next = 0
            func submit() {
                guard next < items.count else { return }
                let index = next
                next += 1
                group.addTask {
                    let item = items[index]
                    guard item.isRemote else { return (index, inspect(item, settings: settings)) }
                    return (index, await inspectRemote(item, fetcher: fetcher, into: scratch, settings: settings))
                }
            }
            // Enough fetches in flight to keep the fetcher's own limits the binding ones.
            for _ in 0..<remote.maxConcurrentFetches { submit() }
            for await (index, report) in group {
                reports[index] = report
                submit()
            }
        }
        await fetcher.shutdown()
        try? FileManager.default.removeItem(atPath: scratch)
        return reports.map { $0! }
    }

    private static func inspectRemote(
        _ item: InputItem, fetcher: RemoteFetcher, into directory: String, settings: ProcessingSettings
    ) async -> InspectReport {
        do throws(PushPrepError) {
            let outcome = try await fetcher.fetch(item.source, into: directory, maxInputBytes: settings.maxInputBytes)
            guard case .downloaded(let download) = outcome else {
                throw PushPrepError(.fetchFailed, "HTTP 304 from \(item.source) to an unconditional request")
            }
            defer { unlink(download.path) }
            var report = inspect(InputItem(source: item.source, path: download.path), settings: settings)
            report.plan.insert("fetch \(download.finalURL) (HTTP \(download.status), \(download.size) bytes)", at: 0)
            return report
        } catch {
            return failed(item, error)
        }
    }

    private static func failed(_ item: InputItem, _ error: PushPrepError) -> InspectReport {
        InspectReport(
            source: item.source, metadata: [], meetsAppleRules: false, problems: [],
            plan: ["fail with \(error.code)"],
            error: Failure.ErrorInfo(error))
    }
}
