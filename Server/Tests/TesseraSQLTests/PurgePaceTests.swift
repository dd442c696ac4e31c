import Foundation
import Testing
import TesseraSQL

@Suite("the purge's pace")
struct PurgePaceTests {
    @Test("the rest after a batch grows with how busy the node is: a tenth of the time idle, a fortieth from half the cores")
    func restFollowsTheLoad() {
        let batch = Duration.milliseconds(1)
        #expect(PurgePace.rest(after: batch, busy: 0) == .milliseconds(9))
        #expect(PurgePace.rest(after: batch, busy: 0.25) == .milliseconds(24))
        #expect(PurgePace.rest(after: batch, busy: 0.5) == .milliseconds(39))
        #expect(PurgePace.rest(after: batch, busy: 2) == .milliseconds(39), "no longer than a fortieth")
        #expect(PurgePace.rest(after: batch, busy: -1) == .milliseconds(9))
        #expect(PurgePace.rest(after: .microseconds(10), busy: 0) == .milliseconds(2), "a rest of 2 ms at least")
    }

    @Test("the node's load is the CPU its process used beside the purge, measured over a window; as busy as can be before one")
    func loadIsTheProcessCPU() {
        // Each bound holds however busy the machine and the other tests are: the window starts at
        // the pace's making and ends at the call that measures it; outside readings enclose it.
        let (cpuBefore, wallBefore) = (PurgePace.processCPUTime(), ContinuousClock.now)
        var pace = PurgePace(cores: 1)
        let wallInsideStart = ContinuousClock.now
        #expect(pace.rest(after: .milliseconds(1)) == .milliseconds(39), "no window yet: rest as on a busy node")
        #expect(pace.busy == 1)
        Self.work(.milliseconds(300))
        let wallInside = ContinuousClock.now - wallInsideStart
        _ = pace.rest(after: .zero)
        let (cpuAround, wallAround) = (PurgePace.processCPUTime() - cpuBefore, ContinuousClock.now - wallBefore)
        // The process used at least this thread's 300 ms in the window, and at most what it used around it.
        #expect(pace.busy >= Duration.milliseconds(299) / wallAround, "busy \(pace.busy) over at most \(wallAround)")
        #expect(pace.busy <= cpuAround / wallInside, "busy \(pace.busy): the process used \(cpuAround) around a window of at least \(wallInside)")

        // The purge's own time is not the node's load: the same work, reported as the batch's, is left out.
        let cpuBeforeOwn = PurgePace.processCPUTime()
        var own = PurgePace(cores: 1)
        let started = ContinuousClock.now
        Self.work(.milliseconds(300))
        let batch = ContinuousClock.now - started
        _ = own.rest(after: batch)
        let cpuAroundOwn = PurgePace.processCPUTime() - cpuBeforeOwn
        #expect(own.busy <= max(cpuAroundOwn - batch, .zero) / batch + 0.001,
                "busy \(own.busy): the process used \(cpuAroundOwn), \(batch) of it the batch's")
    }

    /// Keeps this thread busy until it has had `cpu` of CPU time.
    static func work(_ cpu: Duration) {
        let start = threadCPUTime()
        var sink: UInt64 = 1
        while threadCPUTime() - start < cpu {
            for index in 0..<10_000 { sink = sink &* 6_364_136_223_846_793_005 &+ UInt64(index) }
        }
        precondition(sink != 0 || cpu >= .zero)
    }

    static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
