package io.betree.bench.workload;

import org.HdrHistogram.Histogram;

/**
 * Request latencies of one phase, in an HdrHistogram of nanoseconds (3 significant digits). Not
 * thread-safe: a phase with several client threads gives each its own and {@link #add}s them up.
 */
public final class Latencies {
    private final Histogram histogram = new Histogram(3);
    private final String kind;

    /** Latencies of requests of {@code kind} (named in the {@link SlowRequest} events of slow ones). */
    public Latencies(String kind) {
        this.kind = kind;
    }

    /** Records one request that took {@code nanos}; a slow one also as a JFR event ({@link SlowRequest}). */
    public void record(long nanos) {
        histogram.recordValue(Math.max(1, nanos));
        SlowRequest.ifSlow(kind, nanos);
    }

    /** Adds every request recorded in {@code other}. */
    public void add(Latencies other) {
        histogram.add(other.histogram);
    }

    /** The latency at {@code percentile} (0-100) in microseconds; NaN when nothing was recorded. */
    public double micros(double percentile) {
        return histogram.getTotalCount() == 0 ? Double.NaN
                : histogram.getValueAtPercentile(percentile) / 1000.0;
    }

    /** The slowest request in microseconds; NaN when nothing was recorded. */
    public double maxMicros() {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getMaxValue() / 1000.0;
    }

    /** Requests recorded. */
    public long count() {
        return histogram.getTotalCount();
    }
}
