package io.betree.internal.txn;

import io.betree.internal.tree.RangeMessage;
import io.betree.internal.txn.spill.CommitRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Remembers which keys recent commits wrote, as 64-bit hashes of (index id, key), for first-
 * committer-wins checks ({@link RecentWrites}). Entries older than every live snapshot go stale,
 * so the table stays as small as the oldest running transaction allows. A hash collision can only
 * cause a spurious conflict, never a missed one.
 *
 * <p>A large commit (a transaction that spilled its writes) is kept apart, as its {@link CommitRun}:
 * millions of keys would not fit the heap as entries. It stays while a snapshot that predates it
 * is live; a key is looked up in it (one block read) only by a transaction whose snapshot predates
 * it, and a large transaction compares its own run with it in one sequential pass.
 *
 * <p>Lookups are thread-safe; {@link #record}, {@link #recordLarge} and {@link #prune} are called
 * under the commit gate.
 */
final class ConflictTable {
    private final RecentWrites recent = new RecentWrites();
    /** Asked first: most keys no commit after the snapshot wrote, and the filter stays in the CPU's caches. */
    private final RecentKeyFilter recentFilter = new RecentKeyFilter();
    /** The newest commit recorded by {@link #record}, or 0. Written under the commit gate. */
    private volatile long newestSmall;
    /** Large commits, oldest first; replaced, never modified, so lookups need no lock. */
    private volatile List<LargeCommit> large = List.of();

    /** Range deletes and broadcasts of recent commits, oldest first; replaced, never modified. */
    private volatile List<RangeCommit> ranges = List.of();

    private record LargeCommit(long ts, CommitRun keys) {
    }

    /** A range delete or broadcast of index {@code indexId}, committed at {@code ts} once recorded. */
    record RangeCommit(long ts, int indexId, RangeMessage range) {
    }

    /** The range deletes and broadcasts among {@code ops}, not yet timestamped; an empty list when none. */
    static List<RangeCommit> rangesOf(List<WriteOp> ops) {
        List<RangeCommit> found = null;
        for (WriteOp op : ops) {
            if (op.isRange()) {
                if (found == null) {
                    found = new ArrayList<>(1);
                }
                found.add(new RangeCommit(0, op.indexId(), op.range()));
            }
        }
        return found == null ? List.of() : found;
    }

    /** The newest commit recorded that is not large, or 0. */
    long newestSmallCommit() {
        return newestSmall;
    }

    /**
     * Whether a commit after {@code snapshotTs} was recorded: if not, no key can conflict, and a
     * write need not be looked up.
     */
    boolean anyCommitAfter(long snapshotTs) {
        List<LargeCommit> big = large;
        return newestSmall > snapshotTs || !big.isEmpty() && big.get(big.size() - 1).ts > snapshotTs;
    }

    /**
     * The newest commit that wrote a key hashing to {@code hash}, among the commits not large; or
     * some timestamp at or before the last {@link #prune} horizon (0 included) when none after it did.
     */
    long lastSmallCommit(long hash) {
        return recent.get(hash);
    }

    /**
     * The newest commit that wrote {@code key} of index {@code indexId} (hashed to {@code hash}), if
     * it is after {@code snapshotTs}; otherwise some timestamp at or before it. Large commits at or
     * before {@code largeCheckedTs} are not looked at (the caller checked them), nor those its
     * snapshot includes: each look reads a block.
     */
    long lastCommit(long hash, int indexId, byte[] key, long snapshotTs, long largeCheckedTs) {
        long ts = recentFilter.mayHaveWritten(hash, snapshotTs) ? lastSmallCommit(hash) : 0;
        ts = Math.max(ts, lastRangeCovering(indexId, key, snapshotTs));
        long floor = Math.max(Math.max(ts, snapshotTs), largeCheckedTs);
        List<LargeCommit> big = large;
        for (int i = big.size() - 1; i >= 0 && big.get(i).ts > floor; i--) {
            if (big.get(i).keys.contains(indexId, key)) {
                return big.get(i).ts;
            }
        }
        return ts;
    }

    /**
     * The newest commit after {@code snapshotTs} whose range delete or broadcast covers {@code key}
     * of index {@code indexId}, or 0. A write of the key conflicts with it as with a write of the
     * key itself.
     */
    long lastRangeCovering(int indexId, byte[] key, long snapshotTs) {
        List<RangeCommit> r = ranges;
        for (int i = r.size() - 1; i >= 0 && r.get(i).ts > snapshotTs; i--) {
            if (r.get(i).indexId == indexId && r.get(i).range.covers(key)) {
                return r.get(i).ts;
            }
        }
        return 0;
    }

    /**
     * Records {@code commitRanges} ({@link #rangesOf}) as committed at {@code ts}. Called in commit
     * order. Copies the list: range operations are rare, and lookups then need no lock.
     */
    void recordRanges(long ts, List<RangeCommit> commitRanges) {
        List<RangeCommit> next = new ArrayList<>(ranges);
        for (RangeCommit r : commitRanges) {
            next.add(new RangeCommit(ts, r.indexId(), r.range()));
        }
        ranges = List.copyOf(next);
    }

    /** The runs of the large commits after {@code snapshotTs}, oldest first, with their timestamps. */
    List<Map.Entry<Long, CommitRun>> largeAfter(long snapshotTs) {
        List<LargeCommit> big = large;
        if (big.isEmpty()) {
            return List.of(); // every small commit asks: no allocation in the usual case
        }
        List<Map.Entry<Long, CommitRun>> after = new ArrayList<>();
        for (LargeCommit c : big) {
            if (c.ts > snapshotTs) {
                after.add(Map.entry(c.ts, c.keys));
            }
        }
        return after;
    }

    /**
     * Records that commit {@code ts} wrote the keys of {@code keys}, which the table owns from now on
     * and closes once pruned. Called in commit order.
     */
    void recordLarge(long ts, CommitRun keys) {
        List<LargeCommit> next = new ArrayList<>(large);
        next.add(new LargeCommit(ts, keys));
        large = List.copyOf(next);
    }

    /** Closes every large commit's run (the environment is closing). */
    void close() {
        List<LargeCommit> big = large;
        large = List.of();
        for (LargeCommit c : big) {
            closeQuietly(c.keys);
        }
    }

    /**
     * Brings the table's lines for {@code hashes} into the CPU's caches ahead of {@link #record}, out
     * of the commit gate. Any thread.
     */
    void prepareToRecord(long[] hashes) {
        // The sum decides a branch, so the reads are not optimized away; it never holds.
        if (recent.touch(hashes) == Long.MIN_VALUE) {
            Thread.onSpinWait();
        }
    }

    /** Records that commit {@code ts} wrote the keys {@code hashes}. Called in commit order. */
    void record(long ts, long[] hashes) {
        for (long h : hashes) {
            recent.put(h, ts);
        }
        recentFilter.record(ts, hashes);
        newestSmall = ts;
    }

    /** Forgets commits at or before {@code horizon}: no live snapshot predates them. */
    void prune(long horizon) {
        recent.advanceHorizon(horizon);
        List<RangeCommit> r = ranges;
        int stale = 0;
        while (stale < r.size() && r.get(stale).ts <= horizon) {
            stale++;
        }
        if (stale > 0) {
            ranges = List.copyOf(r.subList(stale, r.size()));
        }
        List<LargeCommit> big = large;
        int dropped = 0;
        while (dropped < big.size() && big.get(dropped).ts <= horizon) {
            dropped++;
        }
        if (dropped > 0) {
            large = List.copyOf(big.subList(dropped, big.size()));
            for (int i = 0; i < dropped; i++) {
                // A lookup racing with this finds the run closed and reports no conflict: its
                // snapshot is at or after the horizon, so the commit is no conflict for it.
                closeQuietly(big.get(i).keys);
            }
        }
    }

    /**
     * Closes a run whatever fails: this runs in the commit gate after a commit was logged, where a
     * failure would leave that commit unapplied. A file left behind is deleted at the next open.
     */
    private static void closeQuietly(CommitRun run) {
        try {
            run.close();
        } catch (RuntimeException ignored) {
            // Only a temporary file is at stake.
        }
    }

    /** A 64-bit hash of an index id and a key. */
    static long hash(int indexId, byte[] key) {
        long h = 0x9E3779B97F4A7C15L * (indexId + 1);
        int i = 0;
        for (; i + 8 <= key.length; i += 8) {
            long chunk = 0;
            for (int j = 0; j < 8; j++) {
                chunk = (chunk << 8) | (key[i + j] & 0xff);
            }
            h = mix(h ^ chunk);
        }
        long tail = key.length;
        for (; i < key.length; i++) {
            tail = (tail << 8) | (key[i] & 0xff);
        }
        return mix(mix(h ^ tail) ^ key.length);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
