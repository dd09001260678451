package io.betree.internal.cache;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The cache's entries in second-chance clock order: a hand sweeps the ring, skipping pinned entries
 * and entries being written, and clearing the referenced bit of the ones it passes, until it finds
 * an entry not referenced since the last sweep; entries that ask for extra sweeps
 * ({@link CacheEntry#extraSweeps}: internal nodes) are passed that many more times. Removal is
 * O(1) (the last entry takes the removed
 * one's slot), which changes the order a little and costs nothing an eviction needs.
 *
 * <p>Not thread-safe: the owning {@link NodeCache} guards it with its lock.
 */
final class ClockRing implements Iterable<CacheEntry> {
    /** The most extra sweeps an entry may ask for ({@link CacheEntry#extraSweeps}). */
    static final int MAX_EXTRA_SWEEPS = 3;

    private final List<CacheEntry> entries = new ArrayList<>();
    private int hand;

    void add(CacheEntry e) {
        e.ringIndex = entries.size();
        entries.add(e);
    }

    void remove(CacheEntry e) {
        int i = e.ringIndex;
        CacheEntry last = entries.remove(entries.size() - 1);
        if (last != e) {
            entries.set(i, last);
            last.ringIndex = i;
        }
        e.ringIndex = -1;
        if (hand >= entries.size()) {
            hand = 0;
        }
    }

    /**
     * The next eviction candidate, or null when every entry is pinned, being written, or kept
     * resident while {@code includeKept} is false. Entries kept resident
     * ({@link CacheEntry#keepResident}) are candidates only when {@code includeKept} and no other
     * entry is.
     */
    CacheEntry nextVictim(boolean includeKept) {
        CacheEntry e = sweep(false);
        return e != null || !includeKept ? e : sweep(true);
    }

    private CacheEntry sweep(boolean includeKept) {
        for (int seen = 0; seen < (MAX_EXTRA_SWEEPS + 2) * entries.size() + 2 && !entries.isEmpty(); seen++) {
            if (hand >= entries.size()) {
                hand = 0;
            }
            CacheEntry e = entries.get(hand++);
            if (!evictable(e) || (e.keptResident && !includeKept)) {
                continue;
            }
            if (e.referenced) {
                e.referenced = false;
                e.sweepsLeft = Math.min(MAX_EXTRA_SWEEPS, e.extraSweeps());
                continue;
            }
            if (e.sweepsLeft > 0) {
                e.sweepsLeft--;
                continue;
            }
            return e;
        }
        return null;
    }

    /**
     * The first clean entry not referenced since the hand last passed, looking once round the ring
     * and changing no referenced bit; null when there is none. Dropping a clean entry frees its
     * memory at once, where a dirty one is compressed and written first. Extra sweeps are not
     * honoured here: the cache asks only when writers wait past its hard limit, and then a clean
     * internal node frees the most memory soonest.
     */
    CacheEntry nextCleanVictim() {
        for (int seen = 0; seen < entries.size(); seen++) {
            if (hand >= entries.size()) {
                hand = 0;
            }
            CacheEntry e = entries.get(hand++);
            if (evictable(e) && !e.referenced && !e.keptResident && !e.dirty && !e.checkpointPending) {
                return e;
            }
        }
        return null;
    }

    /** Whether some entry could be evicted now; entries kept resident count only if {@code includeKept}. */
    boolean anyEvictable(boolean includeKept) {
        for (CacheEntry e : entries) {
            if (evictable(e) && (includeKept || !e.keptResident)) {
                return true;
            }
        }
        return false;
    }

    private static boolean evictable(CacheEntry e) {
        return e.pins() == 0 && !e.writing;
    }

    void clear() {
        entries.clear();
        hand = 0;
    }

    @Override
    public Iterator<CacheEntry> iterator() {
        return entries.iterator();
    }
}
