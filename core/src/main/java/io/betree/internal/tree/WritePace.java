package io.betree.internal.tree;

import java.util.concurrent.TimeUnit;

/**
 * How much one tree's writers are slowed to keep level with what its flushers drain from the root
 * and its evictor frees: a delay per commit of {@link #pace} times the commit's usual duration
 * ({@link UsualCommitTime}). The pace is learned (an integral controller): it grows while the tree
 * stands past {@link #SET_POINT} in the band between slowing and stopping its writers (by its root's
 * size or its node cache's headroom, whichever is further) and shrinks while it stands below, in
 * proportion to the difference and to the time that passes. A delay in proportion to where the tree
 * stands alone follows the flushers' and evictor's steps, which free megabytes at once: between
 * two steps the root or the cache filled again and the delays went from nothing to the longest
 * every few dozen commits, where the same hold spread over every batch costs each about a
 * millisecond ({@link BackPressure}).
 *
 * <p>Thread-safe: writers of the tree update it as they commit.
 */
final class WritePace {
    /**
     * Where in the band between slowing and stopping writers the pace steers the tree to, as a
     * share of the band: a root of 2.5 node sizes (the band being 2 to 4), or a node cache 44% of
     * the way into its headroom (the band being from a quarter of the way to all of it).
     */
    static final double SET_POINT = 0.25;
    /** How fast the pace moves: per second, per band above or below the set point. */
    static final double GAIN_PER_SECOND = 8.0;
    /** The most a writer is slowed by the pace: four times its usual commit as a delay. */
    static final double MAX_PACE = 4.0;
    /**
     * The longest stretch of time one update counts while the root is over the set point: a tree
     * written after a pause (or first written) does not take the whole pause as time the root
     * was full.
     */
    private static final long MAX_GROWTH_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private double pace;
    private long updatedAt = System.nanoTime();

    /**
     * The pace after accounting for the time since the last update, with the tree standing at
     * {@code behind} in the band between slowing and stopping its writers (0 where slowing starts,
     * 1 at the stop or past it, below 0 under the band): the larger of where its root and where
     * its node cache stand.
     */
    synchronized double update(double behind, long nowNanos) {
        // Writers read the clock before they get here, so a later reading may arrive first.
        long elapsed = Math.max(0, nowNanos - updatedAt);
        updatedAt = Math.max(updatedAt, nowNanos);
        double error = behind - SET_POINT;
        if (error > 0) {
            elapsed = Math.min(elapsed, MAX_GROWTH_NANOS);
        }
        pace = Math.max(0, Math.min(MAX_PACE, pace + GAIN_PER_SECOND * error * elapsed / 1e9));
        return pace;
    }

    /** The pace as last updated. */
    synchronized double pace() {
        return pace;
    }
}
