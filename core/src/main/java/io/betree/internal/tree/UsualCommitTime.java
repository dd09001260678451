package io.betree.internal.tree;

/**
 * How long commits to one tree usually take, from the start of their transaction until they are
 * visible, and by how much a given commit overran that: back-pressure counts the overrun against
 * the delay it imposes ({@link BackPressure}). A commit slowed by a collection pause, a busy
 * core or a slow append has already kept its writer from writing for that long; delaying it the
 * full amount on top made the slowest batches the slowest twice over. In a delete-FIFO load the
 * 1% slowest batches took 20.6 ms of work where the average took 7.6, and were then delayed
 * 16.1 ms, where the average was delayed 6.2.
 *
 * <p>The usual time is a moving average over recent commits. A commit's time counts at most
 * twice the average, so that a transaction left open for a while (its writer idle, not slow) does
 * not make every later commit look quick. Thread-safe: concurrent updates may overwrite one
 * another, which only makes the average move a little less.
 */
final class UsualCommitTime {
    /** Weight of the newest commit in the average, as a shift: 1/16. */
    private static final int WEIGHT_SHIFT = 4;

    /** The moving average in nanoseconds; 0 until the first commit. */
    private volatile long usualNanos;

    /** The usual commit's duration in nanoseconds, 0 before the first commit. */
    long usualNanos() {
        return usualNanos;
    }

    /**
     * Records a commit that took {@code nanos} and returns how much longer than usual it took (0
     * if not longer), measured against the average before it.
     */
    long overrun(long nanos) {
        long usual = usualNanos;
        if (usual == 0) {
            usualNanos = Math.max(1, nanos);
            return 0;
        }
        long counted = Math.min(Math.max(nanos, 0), 2 * usual);
        usualNanos = Math.max(1, usual + ((counted - usual) >> WEIGHT_SHIFT));
        return Math.max(0, nanos - usual);
    }
}
