package io.betree.internal.txn;

import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Answers "certainly no recent small commit after this snapshot wrote this key" from a few small
 * bitmaps, before {@link RecentWrites} is asked. Every write of a transaction that began before
 * another writer's commit is looked up at once ({@code Index.put} fails early on a known conflict),
 * and the table of recent writes is as large as the keys written since the oldest live snapshot:
 * with 16 writers of 1,000-row transactions about a megabyte, so each lookup missed the CPU's own
 * caches, a ninth of the writers' time in a 16-writer time-series load (docs/benchmarks.md).
 *
 * <p>The recorded commits are split into {@value #GENERATIONS} generations of consecutive commits,
 * each a Bloom filter of {@value #BITS} bits (two bits of one 64-bit word per key hash, so a lookup
 * reads one word per generation) that takes about {@value #KEYS_PER_GENERATION} keys before the
 * next generation starts; the oldest generation is then cleared for reuse. A lookup reads only the
 * generations that hold a commit after its snapshot. When the generations no longer reach back to a
 * snapshot (a long transaction), every lookup for it answers "maybe", and the table decides.
 *
 * <p>One thread at a time records ({@link #record}: the commit gate holds it); {@link #mayHaveWritten}
 * is lock-free and, inside the gate, exact for the commits recorded (no key a recorded commit after
 * the snapshot wrote is ever answered "no"). Outside the gate a lookup racing with a commit being
 * recorded may miss that commit, as a {@link RecentWrites} lookup may; the gate's own check catches
 * it. A generation being cleared has an odd stamp, and a lookup that saw a stamp change answers
 * "maybe".
 */
final class RecentKeyFilter {
    static final int GENERATIONS = 4;
    static final int BITS = 1 << 18;
    /**
     * Keys after which the next commit starts a new generation: two bits each set about an eighth
     * of its bits (a commit that overshoots only makes more answers "maybe").
     */
    static final int KEYS_PER_GENERATION = BITS / 16;
    /** The top hash bits pick one of the BITS / 64 words. */
    private static final int WORD_SHIFT = 64 - Integer.numberOfTrailingZeros(BITS / 64);

    /** One generation of consecutive commits. */
    private static final class Generation {
        final long[] words = new long[BITS / 64];
        /** The newest commit recorded in this generation, 0 when none. */
        volatile long newest;
        /** Odd while the generation is cleared for reuse. */
        volatile long stamp;
        /** Keys recorded. Writer only. */
        int keys;
    }

    private final Generation[] ring = new Generation[GENERATIONS];
    /** Where commits are recorded now. Writer only. */
    private int current;
    /** Every small commit after this one is in a generation of the ring. */
    private volatile long coveredAfter;

    RecentKeyFilter() {
        for (int i = 0; i < GENERATIONS; i++) {
            ring[i] = new Generation();
        }
    }

    /** Records that commit {@code ts}, newer than every recorded one, wrote keys hashing to {@code hashes}. Writer only. */
    void record(long ts, long[] hashes) {
        Generation g = ring[current];
        if (g.keys >= KEYS_PER_GENERATION) {
            g = startNextGeneration();
        }
        long[] words = g.words;
        for (long h : hashes) {
            words[word(h)] |= bits(h);
        }
        g.keys += hashes.length;
        g.newest = ts; // published after its bits: a lookup that reads ts here sees them
    }

    /**
     * False only if no small commit recorded after {@code snapshotTs} wrote a key hashing to
     * {@code hash} (a commit being recorded meanwhile aside); true when one may have. Lock-free.
     */
    boolean mayHaveWritten(long hash, long snapshotTs) {
        int w = word(hash);
        long b = bits(hash);
        for (Generation g : ring) {
            long stamp = g.stamp;
            if ((stamp & 1) != 0) {
                return true;
            }
            if (g.newest > snapshotTs && (g.words[w] & b) == b) {
                return true;
            }
            VarHandle.loadLoadFence();
            if (g.stamp != stamp) {
                return true;
            }
        }
        // Read last: a generation cleared while this lookup read it raised this first.
        return coveredAfter > snapshotTs;
    }

    private Generation startNextGeneration() {
        current = (current + 1) % GENERATIONS;
        Generation g = ring[current];
        if (g.newest != 0) {
            coveredAfter = g.newest; // before the clear, so that lookups that see it cleared know
        }
        long stamp = g.stamp;
        g.stamp = stamp + 1;
        VarHandle.storeStoreFence(); // no cleared word is seen before the odd stamp
        Arrays.fill(g.words, 0);
        g.newest = 0;
        g.keys = 0;
        g.stamp = stamp + 2;
        return g;
    }

    private static int word(long hash) {
        return (int) (hash >>> WORD_SHIFT);
    }

    /** Two bits of a word, from hash bits the word index and {@link RecentWrites}'s slot do not use. */
    private static long bits(long hash) {
        return (1L << ((hash >>> 32) & 63)) | (1L << ((hash >>> 38) & 63));
    }
}
