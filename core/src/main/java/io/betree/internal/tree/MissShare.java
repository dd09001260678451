package io.betree.internal.tree;

/**
 * The share of a tree's recent point reads that reached a leaf and found no row there, decaying
 * (the counts halve every {@link #WINDOW} reads): whether a leaf that has shed its key filters
 * should read them back for the next read ({@link LeafNode#shed}). Reading them back costs about
 * what three basement reads do (some 100 KB against 30-40 KB), and each later miss in that leaf is
 * then answered without a basement read; a hit gains nothing from them. Past an eighth of reads
 * missing, they are read back; until enough reads are counted to tell, too, as before shedding.
 *
 * <p>Updated by readers without synchronization: a count lost to a race only moves the share a little.
 */
final class MissShare {
    private static final int WINDOW = 1024;
    private static final int ENOUGH = 64;
    private int reads;
    private int misses;

    /** Counts a read that reached a leaf; {@code missed} when it found no row. */
    void record(boolean missed) {
        int r = reads + 1;
        int m = misses + (missed ? 1 : 0);
        if (r >= WINDOW) {
            r >>= 1;
            m >>= 1;
        }
        reads = r;
        misses = m;
    }

    /** Whether reads miss often enough that a leaf's shed filters are worth reading back. */
    boolean common() {
        int r = reads;
        return r < ENOUGH || misses * 8L > r;
    }

    /**
     * Whether enough reads were counted to tell, and they miss often enough: for work that pays
     * only when misses go on, such as reading a parent's other leaves ahead.
     */
    boolean commonForSure() {
        int r = reads;
        return r >= ENOUGH && misses * 8L > r;
    }
}
