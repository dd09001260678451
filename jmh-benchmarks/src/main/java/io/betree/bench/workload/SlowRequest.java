package io.betree.bench.workload;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/**
 * A JFR event for a request (a batch, a read) slower than {@link #THRESHOLD_NANOS}, committed
 * when it ends: with a flight recording of a run, the recording's thread parks, GC pauses and
 * samples in the window before each event tell what the slow request waited for. Costs nothing
 * without a recording. The event itself has no duration (its latency is a field), so a JFR
 * threshold set on it would drop every one.
 */
@Name("io.betree.bench.SlowRequest")
@Label("Slow request")
@Category("betree benchmarks")
@Description("A benchmark request slower than 25 ms; it ended at the event's time")
final class SlowRequest extends jdk.jfr.Event {
    /** Requests faster than this are not recorded. */
    static final long THRESHOLD_NANOS = 25_000_000L;

    @Label("Kind")
    String kind;

    @Label("Latency")
    @Timespan(Timespan.NANOSECONDS)
    long latency;

    /** Commits an event for a request of {@code kind} that took {@code nanos}, if slow and recorded. */
    static void ifSlow(String kind, long nanos) {
        if (nanos > THRESHOLD_NANOS) {
            SlowRequest event = new SlowRequest();
            if (event.shouldCommit()) {
                event.kind = kind;
                event.latency = nanos;
                event.commit();
            }
        }
    }
}
