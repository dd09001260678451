package io.betree.internal.cache;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The cache's entries in second-chance clock order: a hand sweeps the ring, skipping pinned entries
 * and entries being written, and clearing the referenced bit of the ones it passes, until it finds
 * an entry not referenced since the last sweep; entries that ask for extra sweeps
 * ({@link CacheEntry#extraSweeps}: internal nodes) are passed that many more times. Removal is
 * O(1) (the last entry takes the removed
 * one's slot), which changes the order a little and costs nothing an eviction needs.
 *
 * <p>An entry read from its block ({@link #addLoaded}) starts <em>on probation</em>, in a queue
 * in the order they came: while more than a tenth of the entries are on probation, the oldest goes
 * first, unless it was used again meanwhile, which moves it to the clock. Blocks read once and not
 * again (a point read's basement, a scan's) so go before anything the clock holds, and cannot push
 * out the leaves and internal nodes that every read passes through: under a 64 MiB cache, 20,000
 * random gets on a 28 M-row primary index re-read a 100 KB leaf every other get while the clock
 * alone chose. The block numbers of the last entries that left probation unused are remembered
 * (about as many as the ring holds): such a block read again joins the clock at once, as a leaf
 * used every few hundred gets is, whose reuse a short probation would never see.
 *
 * <p>Not thread-safe: the owning {@link NodeCache} guards it with its lock, except for
 * {@link #use}, which pinners call without it.
 */
final class ClockRing implements Iterable<CacheEntry> {
    /** The most extra sweeps an entry may ask for ({@link CacheEntry#extraSweeps}). */
    static final int MAX_EXTRA_SWEEPS = 3;
    /** Probation's share of the entries, as a divisor: past it, its oldest entries go first. */
    static final int PROBATION_DIVISOR = 10;
    /** The fewest block numbers remembered of entries that left probation unused. */
    private static final int MIN_REMEMBERED = 64;
    /**
     * Other entries' loads before which another pin of an entry on probation belongs to the use
     * that loaded it and does not count as a second one: a cursor's next batch pins the leaf and
     * basement its first batch read. Counted as uses, they moved every scanned basement to the
     * clock, which then pushed out the leaves: 12,000 100-row scans read a 100 KB leaf again
     * 4,348 times, about one scan in three.
     */
    static final int CORRELATED_LOADS = 8;

    private final List<CacheEntry> entries = new ArrayList<>();
    private int hand;
    /** Entries on probation, oldest first; may still hold entries that left it (skipped when met). */
    private final ArrayDeque<CacheEntry> probation = new ArrayDeque<>();
    private int onProbation;
    /** Blocks whose entries left probation unused, oldest first. */
    private final LinkedHashSet<Long> leftUnused = new LinkedHashSet<>();
    /** Entries added by {@link #addLoaded}; written under the cache's lock, read by pinners without it. */
    private volatile long loads;

    /** Adds an entry to the clock, as one in use. */
    void add(CacheEntry e) {
        e.ringIndex = entries.size();
        entries.add(e);
    }

    /**
     * Adds an entry just read from its block: on probation and unreferenced (its reader's own use
     * does not count), or to the clock as one in use if its block left probation unused not long ago.
     */
    void addLoaded(CacheEntry e) {
        add(e);
        e.loadedAt = ++loads;
        if (leftUnused.remove(e.blockNumber())) {
            e.referenced = true;
            return;
        }
        e.referenced = false;
        e.onProbation = true;
        onProbation++;
        probation.addLast(e);
        if (probation.size() > 2 * onProbation + MIN_REMEMBERED) {
            probation.removeIf(p -> !p.onProbation);
        }
    }

    /**
     * Marks the pinned {@code e} used; any thread. A pin of an entry on probation before
     * {@link #CORRELATED_LOADS} other entries were loaded after it is part of the use that loaded
     * it and leaves it unmarked.
     */
    void use(CacheEntry e) {
        if (!e.onProbation || loads - e.loadedAt >= CORRELATED_LOADS) {
            e.referenced = true;
        }
    }

    /** Entries on probation now. */
    int onProbation() {
        return onProbation;
    }

    void remove(CacheEntry e) {
        if (e.onProbation) {
            e.onProbation = false;
            onProbation--;
            leftUnused.add(e.blockNumber());
            int room = Math.max(MIN_REMEMBERED, entries.size());
            Iterator<Long> oldest = leftUnused.iterator();
            while (leftUnused.size() > room) {
                oldest.next();
                oldest.remove();
            }
        }
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
        CacheEntry e = oldestOnProbation(false);
        if (e == null) {
            e = sweep(false);
        }
        if (e == null) {
            e = oldestOnProbation(true);
        }
        if (e == null) {
            e = sweep(false); // the clock again, with what that moved to it
        }
        // Last, entries kept resident, on probation or not (a root read back from disk is on
        // probation until pinned again): anything anyEvictable counts must be reachable here, or
        // a writer waiting for room waits for ever.
        return e != null || !includeKept ? e : sweep(true);
    }

    /**
     * The oldest evictable entry on probation, moving those used meanwhile to the clock on the way;
     * null when none is, or, unless {@code evenWithinShare}, when probation holds no more than its
     * share of the entries.
     */
    private CacheEntry oldestOnProbation(boolean evenWithinShare) {
        for (int looked = probation.size(); looked > 0; looked--) {
            if (!evenWithinShare && onProbation <= entries.size() / PROBATION_DIVISOR) {
                return null;
            }
            CacheEntry e = probation.peekFirst();
            if (!e.onProbation) {
                probation.pollFirst();
            } else if (e.referenced) {
                probation.pollFirst();
                e.onProbation = false;
                onProbation--;
            } else if (!evictable(e) || e.keptResident) {
                probation.addLast(probation.pollFirst());
            } else {
                return e; // stays first until it leaves, or is found pinned or used next time
            }
        }
        return null;
    }

    /** The clock's next victim, passing over entries on probation unless {@code includeKept}. */
    private CacheEntry sweep(boolean includeKept) {
        for (int seen = 0; seen < (MAX_EXTRA_SWEEPS + 2) * entries.size() + 2 && !entries.isEmpty(); seen++) {
            if (hand >= entries.size()) {
                hand = 0;
            }
            CacheEntry e = entries.get(hand++);
            if (!evictable(e) || (e.keptResident || e.onProbation) && !includeKept) {
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
        for (CacheEntry e : entries) {
            e.onProbation = false;
        }
        entries.clear();
        probation.clear();
        onProbation = 0;
        leftUnused.clear();
        hand = 0;
    }

    @Override
    public Iterator<CacheEntry> iterator() {
        return entries.iterator();
    }
}
