package io.betree.internal.txn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The newest commit timestamp of each recently written key, by 64-bit key hash: an open-addressing
 * table of primitive longs with linear probing. A map of boxed longs cost every written key two
 * objects and a node, and removing each key again once no snapshot predated its commit; in a
 * 16-writer time-series load recording, pruning and looking up keys was a third of the writers'
 * time.
 *
 * <p>Nothing is removed. An entry at or below the horizon ({@link #advanceHorizon}) is stale: every
 * live snapshot is at or after the horizon, so a stale timestamp means "no conflict" just as no
 * entry does, and its slot is reused by the next key that probes past it. When half the slots
 * have been used the table is rebuilt with only the fresh entries, so probes stay short and the
 * table as large as the writes since the oldest live snapshot. A rebuild that keeps the size
 * refills the array of the generation before and publishes it: with no snapshot live, a
 * delete-FIFO load of 8,000 keys per commit rebuilt about once per commit, and a new
 * half-megabyte array each time was a quarter of all the bytes the process allocated. Refilling
 * the current array in place instead would make lookups outside the commit gate wait for the
 * rebuild, many writers spinning on few cores.
 *
 * <p>One thread at a time writes ({@link #put}, {@link #advanceHorizon}: the commit gate holds
 * them); any thread may call {@link #get} at any time without a lock. A lookup racing with a write
 * may miss that write (the commit gate's own check, which does not race, catches it), but never
 * sees a timestamp the key did not have: a slot being given to another key is marked busy first,
 * and a lookup reads a slot's timestamp before and after its hash, as a sequence lock. A refill
 * makes the former generation's stamp odd while it lasts; a lookup still on that generation sees
 * the stamp change and looks again, in the current one.
 */
final class RecentWrites {
    private static final int MIN_CAPACITY = 1 << 10;
    private static final int MAX_CAPACITY = 1 << 29;
    /** Oversized rebuilds in a row after which a rebuild shrinks the table. */
    private static final int SHRINK_AFTER = 16;
    private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(long[].class);
    /** The timestamp of a slot whose key is being replaced. */
    private static final long BUSY = -1;

    /**
     * One generation of the table; replaced whole by a rebuild. Slot {@code i} is the hash at
     * {@code 2i} and the commit timestamp at {@code 2i + 1} (0: never used, as timestamps start at
     * 1), side by side so that a probe misses the CPU cache once, not twice.
     */
    private static final class Slots {
        final long[] entries;
        final int mask;
        /** Slots ever used in this generation. Writer only. */
        int used;
        /** Odd while the writer refills this former generation's array. */
        volatile long stamp;

        Slots(int capacity) {
            entries = new long[capacity * 2];
            mask = capacity - 1;
        }

        int capacity() {
            return mask + 1;
        }
    }

    private volatile Slots slots = new Slots(MIN_CAPACITY);
    /** Entries at or below this are stale. Writer only. */
    private long horizon;
    /** Rebuilds in a row that found the table four times the size its fresh entries need. Writer only. */
    private int oversizedRebuilds;
    /**
     * The generation before the current one, when of the current one's size: the next rebuild
     * of that size refills it rather than allocating. Writer only.
     */
    private Slots spare;

    /**
     * The newest commit recorded for {@code hash}, or 0; possibly a stale one at or below the
     * horizon, which callers treat like 0. Lock-free.
     */
    long get(long hash) {
        while (true) {
            Slots s = slots;
            long stamp = s.stamp;
            if ((stamp & 1) != 0) {
                continue; // a former generation being refilled; the current one is published after
            }
            long ts = find(s, hash);
            VarHandle.loadLoadFence();
            if (s.stamp == stamp) {
                return ts;
            }
        }
    }

    private static long find(Slots s, long hash) {
        int i = (int) hash & s.mask;
        int probes = 0;
        while (probes <= s.mask) {
            long ts = (long) ENTRIES.getAcquire(s.entries, 2 * i + 1);
            if (ts == 0) {
                return 0;
            }
            if (ts == BUSY) {
                Thread.onSpinWait();
                continue;
            }
            long h = (long) ENTRIES.getAcquire(s.entries, 2 * i);
            if ((long) ENTRIES.getAcquire(s.entries, 2 * i + 1) != ts) {
                continue; // the slot changed while it was read: read it again
            }
            if (h == hash) {
                return ts;
            }
            i = (i + 1) & s.mask;
            probes++;
        }
        return 0; // only while the generation is refilled, which the caller's stamp check catches
    }

    /**
     * Reads the slot where each of {@code hashes} starts its probe, so that the {@link #put}s of
     * these keys find those lines in the CPU's caches: called before the commit gate, where the
     * table's misses would otherwise be paid one after another by the thread every committer waits
     * for. Independent reads, which the CPU overlaps. Any thread; returns a sum of what it read,
     * which callers must use, so that the reads are not optimized away.
     */
    long touch(long[] hashes) {
        Slots s = slots;
        long[] e = s.entries;
        long sum = 0;
        for (long h : hashes) {
            sum += e[2 * ((int) h & s.mask) + 1];
        }
        return sum;
    }

    /** Records that commit {@code ts} (positive, newer than every recorded one) wrote {@code hash}. Writer only. */
    void put(long hash, long ts) {
        Slots s = slots;
        if (s.used + 1 > s.capacity() / 2) {
            s = rebuild(s);
        }
        long[] e = s.entries;
        int reuse = -1;
        int i = (int) hash & s.mask;
        for (long at = e[2 * i + 1]; at != 0; i = (i + 1) & s.mask, at = e[2 * i + 1]) {
            if (e[2 * i] == hash) {
                ENTRIES.setRelease(e, 2 * i + 1, ts);
                return;
            }
            if (reuse < 0 && at <= horizon) {
                reuse = i;
            }
        }
        if (reuse < 0) {
            reuse = i;
            s.used++;
        } else {
            // Marked busy before its hash changes, so that a lookup never pairs the new hash with
            // the old timestamp.
            ENTRIES.setRelease(e, 2 * reuse + 1, BUSY);
        }
        ENTRIES.setRelease(e, 2 * reuse, hash);
        ENTRIES.setRelease(e, 2 * reuse + 1, ts);
    }

    /** Entries at or below {@code ts} are stale from now on: no live snapshot predates them. Writer only. */
    void advanceHorizon(long ts) {
        horizon = Math.max(horizon, ts);
    }

    /**
     * Keeps only the fresh entries of {@code old}, with room for four slots each (or more, while
     * the table shrinks only slowly), in the spare array when it is the size they need, otherwise
     * in a new one, and publishes the result; {@code old} becomes the spare.
     */
    private Slots rebuild(Slots old) {
        long[] e = old.entries;
        int fresh = 0;
        for (int k = 1; k < e.length; k += 2) {
            if (e[k] > horizon) {
                fresh++;
            }
        }
        if (fresh >= MAX_CAPACITY / 4) {
            // Some 100 M keys written since the oldest live snapshot began, each a small commit's.
            throw new IllegalStateException("too many keys written since the oldest live snapshot began ("
                    + fresh + "): end long-running transactions");
        }
        int capacity = MIN_CAPACITY;
        while (capacity < fresh * 4L) {
            capacity <<= 1;
        }
        // Shrinks only after many rebuilds found it oversized: one that comes early in a large
        // commit finds few fresh entries, and the commit's later keys would grow it right back.
        oversizedRebuilds = capacity * 4L <= old.capacity() ? oversizedRebuilds + 1 : 0;
        if (capacity < old.capacity() && oversizedRebuilds < SHRINK_AFTER) {
            capacity = old.capacity();
        }
        Slots next;
        if (spare != null && spare.capacity() == capacity) {
            next = spare;
            long stamp = next.stamp;
            next.stamp = stamp + 1;
            VarHandle.storeStoreFence(); // no cleared slot is seen before the odd stamp
            Arrays.fill(next.entries, 0);
            next.used = 0;
            insertFresh(e, next);
            next.stamp = stamp + 2;
        } else {
            oversizedRebuilds = 0;
            next = new Slots(capacity);
            insertFresh(e, next);
        }
        spare = old.capacity() == capacity ? old : null;
        slots = next; // the volatile write publishes the filled array
        return next;
    }

    /** Inserts the entries of {@code from} above the horizon into {@code into}, which has room. */
    private void insertFresh(long[] from, Slots into) {
        for (int k = 0; k < from.length; k += 2) {
            if (from[k + 1] > horizon) {
                int i = (int) from[k] & into.mask;
                while (into.entries[2 * i + 1] != 0) {
                    i = (i + 1) & into.mask;
                }
                into.entries[2 * i] = from[k];
                into.entries[2 * i + 1] = from[k + 1];
                into.used++;
            }
        }
    }
}
