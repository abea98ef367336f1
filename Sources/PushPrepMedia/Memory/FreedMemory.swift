internal import CVipsShims
import Synchronization

/// Keeps the C allocator from holding on to what big inputs free, so that a process under a
/// memory budget stays near the sum of its inputs' estimates (issue 16, §2).
///
/// glibc's malloc keeps freed blocks for reuse, except those at or above its mmap threshold,
/// which go back to the system at once; but it raises that threshold to the largest block
/// freed (up to 32 MiB). After one big image, the buffers of the next ones (libheif's tiles,
/// libjpeg's coefficient rows) then come from the arenas of the threads that made them, and
/// fragment them: with `--memory-limit 500MB --jobs 2` on scripts/bench-memory.sh's batch
/// (debug build, baseline 81 MB) the process peaked at 576 to 693 MB, against 476 to 492 MB with
/// a fixed threshold of 4 MiB. A fixed threshold for good costs the photo batch about 7% of
/// its time (each buffer above it mapped and unmapped), so it is only set while a big input
/// (an estimate of at least ``bigInput``) runs, and the free memory is returned
/// (`malloc_trim`) when one ends.
///
/// Until the first big input, glibc's own dynamic threshold stays (it starts at 128 KiB and
/// rises to the size of the mapped blocks freed): the estimates are calibrated against it, in a
/// process per input. Fixing it at ``ordinaryThreshold`` from the start (so that free(), which
/// adjusts it without a lock, could never race a big input's `mallopt`) kept more of each
/// mid-sized input's freed buffers in the heap: `MemoryEstimateTests` measured 17.5 MiB for a 4032 px
/// interlaced PNG estimated at 11.5, 10.6 for a 7.4 MiB JPEG, 33.7 for a 21.7 MiB AVIF (all
/// within 30% with glibc's threshold), so the race is left: its worst outcome is a big input
/// that runs with the dynamic threshold, memory, not a crash.
package enum FreedMemory {
    /// Inputs whose estimate is at least this large are big: glibc's largest mmap threshold.
    ///
    /// It makes every 12 MP progressive JPEG or HEIC (about 49 MB) big. Measured on 12 progressive
    /// 4032x3024 JPEGs (`vips gaussnoise 504 378`, `colourspace srgb`, `resize … [Q=85,interlace] 8`),
    /// `/usr/bin/time -f "%e %U %M" pushprep process DIR --jobs 2`, release build, 5 interleaved
    /// runs each: with 32 MiB 1.01 to 1.09 s (mean 1.03), 1.54 s user, peak 190 to 192 MB; with
    /// 64 MiB (none big) 0.92 to 0.95 s (mean 0.94), 1.51 s user, peak 243 to 332 MB. The unmapping
    /// and trimming cost about 8 ms of wall time per such photo, and keep the allocator from
    /// holding 50 to 140 MB the budget does not count: 32 MiB stays.
    package static let bigInput = 32 << 20
    /// The threshold while a big input runs: its buffers of 4 MiB or more are unmapped when freed.
    static let bigInputThreshold: Int32 = 4 << 20
    /// The threshold when none runs: glibc's own ceiling, where its adjustment ends up anyway
    /// once a big image has been freed, and where ordinary photos are fastest.
    static let ordinaryThreshold: Int32 = 32 << 20

    private static let bigInputs = Mutex(0)

    /// A big input is about to decode: big blocks are unmapped when freed from now on.
    package static func bigInputStarted() {
        bigInputs.withLock { count in
            count += 1
            if count == 1 { cvipsshims_set_mmap_threshold(bigInputThreshold) }
        }
    }

    /// A big input is done: the free memory of every arena goes back to the system, before the
    /// caller gives its budget back for others to use.
    package static func bigInputEnded() {
        bigInputs.withLock { count in
            count -= 1
            if count == 0 { cvipsshims_set_mmap_threshold(ordinaryThreshold) }
        }
        cvipsshims_trim_heap()
    }
}

// MARK: - Long-running processes

extension FreedMemory {
    /// Arenas at most in a long-running process (``limitArenas(environment:)``).
    package static let servingArenas: Int32 = 2

    /// Sets the allocator up for a long-running process (`serve`, `worker`), at start: at most
    /// ``servingArenas`` arenas, unless the environment sets glibc's own (`MALLOC_ARENA_MAX`,
    /// `GLIBC_TUNABLES`), which then wins. Returns whether it did.
    ///
    /// glibc gives each thread that allocates under contention an arena of its own, up to 8 per
    /// core, and each keeps what was freed in it; a server whose threads come and go (Dispatch's
    /// pool, the decoders' pools) spreads freed memory over more and more of them. Measured on
    /// `pushprep serve --workers 2` under the soak's load (`PUSHPREP_SOAK_SECONDS=60 make soak`,
    /// SQLite, release build): anonymous memory grew 6.7 MB while heaptrack's live heap stayed
    /// between 4 and 6 MB, and `malloc_trim(0)` from gdb gave 3.7 MB back at once. Sidekiq's and
    /// imgproxy's advice is the same (`MALLOC_ARENA_MAX=2`). The mmap threshold is left to
    /// ``bigInputStarted()`` and ``bigInputEnded()``, whose estimates are calibrated against it.
    @discardableResult
    package static func limitArenas(environment: [String: String]) -> Bool {
        guard environment["MALLOC_ARENA_MAX"] == nil, environment["GLIBC_TUNABLES"] == nil else { return false }
        cvipsshims_set_arena_max(servingArenas)
        return true
    }

    /// Gives the free memory of every arena back to the system (`malloc_trim(0)`). A
    /// long-running process calls it every few seconds, so that what a burst of work freed does
    /// not stay with it (issue 32); with nothing to give back it is a walk over the free lists.
    package static func trim() {
        cvipsshims_trim_heap()
    }
}
