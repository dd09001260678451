package io.betree.internal.txn;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers which keys recent commits wrote, as 64-bit hashes of (index id, key), for first-
 * committer-wins checks. Entries older than every live snapshot are dropped, so the table stays as
 * small as the oldest running transaction allows. A hash collision can only cause a spurious
 * conflict, never a missed one.
 */
final class ConflictTable {
    private final ConcurrentHashMap<Long, Long> lastCommit = new ConcurrentHashMap<>();
    private final ArrayDeque<long[]> byCommit = new ArrayDeque<>();

    /** The newest commit timestamp that wrote {@code hash}, or 0. */
    long lastCommit(long hash) {
        Long ts = lastCommit.get(hash);
        return ts == null ? 0 : ts;
    }

    /** Records that commit {@code ts} wrote the keys {@code hashes}. Called in commit order. */
    void record(long ts, long[] hashes) {
        for (long h : hashes) {
            lastCommit.put(h, ts);
        }
        long[] entry = new long[hashes.length + 1];
        entry[0] = ts;
        System.arraycopy(hashes, 0, entry, 1, hashes.length);
        byCommit.addLast(entry);
    }

    /** Forgets commits at or before {@code horizon}: no live snapshot predates them. */
    void prune(long horizon) {
        while (!byCommit.isEmpty() && byCommit.peekFirst()[0] <= horizon) {
            long[] entry = byCommit.pollFirst();
            for (int i = 1; i < entry.length; i++) {
                lastCommit.remove(entry[i], entry[0]);
            }
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
