package io.betree.bench.workload;

import org.HdrHistogram.Histogram;

/** Request latencies of one phase, in an HdrHistogram of nanoseconds (3 significant digits). */
public final class Latencies {
    private final Histogram histogram = new Histogram(3);

    /** Records one request that took {@code nanos}. */
    public void record(long nanos) {
        histogram.recordValue(Math.max(1, nanos));
    }

    /** The latency at {@code percentile} (0-100) in microseconds; NaN when nothing was recorded. */
    public double micros(double percentile) {
        return histogram.getTotalCount() == 0 ? Double.NaN
                : histogram.getValueAtPercentile(percentile) / 1000.0;
    }

    /** Requests recorded. */
    public long count() {
        return histogram.getTotalCount();
    }
}
